import { galata, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { APIRequestContext, expect, Page, request, TestInfo } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

export const PASSWORD = 'ui-test-password';
const SCREENSHOTS = path.resolve(__dirname, '../../artifacts/screenshots');

export async function login(page: Page, name: string): Promise<void> {
  // A portal page left open goes to the log-in page by itself once its session is gone
  // (common.js, on a 401), which can cut this navigation short (net::ERR_ABORTED): again.
  await expect(async () => {
    await page.goto('/login');
  }).toPass({ timeout: 30_000 });
  await page.getByLabel('User name').fill(name);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('heading', { name: 'My notebooks' })).toBeVisible();
}

/** Save a screenshot both as a Playwright attachment and under artifacts/screenshots. */
export async function snapshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: 'image/png' });
}

/** An API token of the logged-in user, made through the controller's API as a page would. */
export async function apiToken(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')!.content;
    const response = await fetch('/api/me/tokens', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify({ name: 'ui-test', expires_in_days: 1 })
    });
    return (await response.json()).token as string;
  });
}

/** A request context that calls the API (and notebooks) with a bearer token, as scripts do. */
export async function asToken(baseURL: string, token: string): Promise<APIRequestContext> {
  return request.newContext({ baseURL, extraHTTPHeaders: { Authorization: `Bearer ${token}` } });
}

/** A notebook of code cells, as the contents API takes it (a Python 3 kernel). */
export function notebookJson(sources: string[]) {
  return {
    type: 'notebook',
    format: 'json',
    content: {
      cells: sources.map(source => ({
        cell_type: 'code',
        source,
        metadata: {},
        outputs: [],
        execution_count: null
      })),
      metadata: {
        kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' }
      },
      nbformat: 4,
      nbformat_minor: 5
    }
  };
}

/**
 * Open `path` (`lab`, `lab/tree/<file>`) of the notebook server at `notebook` and wait
 * until the lab extension has said who the user is there.
 */
export async function openNotebook(page: Page, notebook: string, path = 'lab'): Promise<void> {
  await page.goto(`${notebook}/${path}`);
  await expect(page.locator('body')).toHaveAttribute('data-cgu-access', /owner|edit|read/, {
    timeout: 90_000
  });
}

/** Create `owner`'s notebook `name` (1 CPU, 1 GiB) and start it, waiting until it runs. */
export async function startNotebook(api: APIRequestContext, owner: string, name: string): Promise<void> {
  await stopRunning(api, owner);
  expect((await api.post('/api/notebooks', { data: { name, cpu: 1, memory: '1Gi' } })).status()).toBe(201);
  expect((await api.post(`/api/notebooks/${owner}/${name}/start?wait=true`)).status()).toBe(202);
}

/**
 * Stop the notebooks `owner` has running: every spec shares one platform, and what earlier
 * specs left running counts against the owner's quota.
 */
export async function stopRunning(api: APIRequestContext, owner: string): Promise<void> {
  for (const notebook of await (await api.get('/api/notebooks')).json()) {
    if (notebook.owner === owner && notebook.state === 'running') {
      await api.post(`/api/notebooks/${owner}/${notebook.name}/stop?wait=true`);
    }
  }
}

/**
 * Code run once in a notebook's own kernel, as its owner: settings in the server's config
 * file in the notebook's home (its Jupyter config directory; a `jupyter_server_config.d`
 * there would be read for server extensions only) that load galata's in-page helpers, the lab
 * extension JupyterLab ships for its own UI tests, and show JupyterLab's application
 * object to the page (which those helpers drive). Only that notebook's server reads it,
 * and only from its next start: nothing of the platform's own configuration changes, so
 * notebooks of other specs (and of anyone outside the tests) never carry test helpers.
 */
const GALATA_CONFIG = `
import json, pathlib
import jupyterlab.galata
from jupyter_core.paths import jupyter_config_dir
path = pathlib.Path(jupyter_config_dir()) / "jupyter_server_config.json"
config = json.loads(path.read_text()) if path.exists() else {}
helpers = str(pathlib.Path(jupyterlab.galata.__file__).parent)
config.setdefault("LabServerApp", {})["extra_labextensions_path"] = [helpers]
config.setdefault("LabApp", {})["expose_app_in_browser"] = True
path.parent.mkdir(parents=True, exist_ok=True)
path.write_text(json.dumps(config))
`;

/**
 * Run `code` in a new kernel of the notebook `page` shows (its origin, its cookie), the
 * kernel started and shut down through `api`; fails with the kernel's error, if any.
 */
async function runInKernel(page: Page, api: APIRequestContext, notebook: string, code: string): Promise<void> {
  const started = await api.post(`${notebook}/api/kernels`, { data: { name: 'python3' } });
  expect(started.status()).toBe(201);
  const kernel = (await started.json()).id as string;
  try {
    const reply = await page.evaluate(
      ({ path, code }) =>
        new Promise<string>((resolve, reject) => {
          const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`);
          const id = crypto.randomUUID();
          const said: string[] = [];
          socket.onerror = () => reject(new Error(`the kernel's channel at ${path} failed`));
          socket.onopen = () =>
            socket.send(
              JSON.stringify({
                channel: 'shell',
                header: {
                  msg_id: id,
                  msg_type: 'execute_request',
                  session: crypto.randomUUID(),
                  username: '',
                  version: '5.3',
                  date: new Date().toISOString()
                },
                parent_header: {},
                metadata: {},
                content: { code, silent: false, store_history: false, user_expressions: {}, allow_stdin: false },
                buffers: []
              })
            );
          socket.onmessage = event => {
            const message = JSON.parse(event.data as string);
            if (message.parent_header?.msg_id !== id) {
              return;
            }
            if (message.msg_type === 'stream' || message.msg_type === 'error') {
              said.push(message.content.text ?? `${message.content.ename}: ${message.content.evalue}`);
            }
            if (message.msg_type === 'execute_reply') {
              socket.close();
              resolve(`${message.content.status} ${said.join('')}`.trim());
            }
          };
        }),
      { path: `${notebook}/api/kernels/${kernel}/channels`, code }
    );
    expect(reply).toBe('ok');
  } finally {
    await api.delete(`${notebook}/api/kernels/${kernel}`);
  }
}

/**
 * Make `owner`'s running notebook `name` drivable by galata (GALATA_CONFIG says how), then
 * restart it so that its server loads the helpers. `page` is any page of a browser context
 * logged in as the owner, as every spec has one, whether it made the account or was given
 * it: the work happens on a page of its own in that context (an API token made on the
 * portal, the kernel's channel opened on the notebook's origin), and `page` stays where it
 * is. A notebook whose server was already prepared keeps the file; doing it again is harmless.
 */
export async function loadGalata(page: Page, owner: string, name: string): Promise<void> {
  const notebook = `/notebook/${owner}/${name}`;
  const own = await page.context().newPage();
  try {
    await own.goto('/notebooks');
    const api = await asToken(new URL(own.url()).origin, await apiToken(own));
    try {
      await openNotebook(own, notebook);
      await runInKernel(own, api, notebook, GALATA_CONFIG);
      expect((await api.post(`/api/notebooks/${owner}/${name}/stop?wait=true`)).status()).toBe(202);
      expect((await api.post(`/api/notebooks/${owner}/${name}/start?wait=true`)).status()).toBe(202);
    } finally {
      await api.dispose();
    }
  } finally {
    await own.close();
  }
}

/**
 * `page` with galata's JupyterLab helpers (`lab.notebook`, `lab.menu`, `lab.filebrowser`,
 * `lab.kernel`...) for the notebook at `notebook`, whose server loadGalata prepared; opens
 * `path` there (`tree/<file>`, or the lab itself) on the notebook's own origin, to which
 * the controller sends the page (labOf says what it waits for).
 */
export async function openLab(page: Page, notebook: string, path = ''): Promise<IJupyterLabPageFixture> {
  await page.goto(`${notebook}/${path ? `lab/${path}` : 'lab'}`);
  return labOf(page, notebook);
}

/**
 * galata's helpers for the JupyterLab of `notebook` that `page` shows or is on its way to,
 * however it got there: openLab's own navigation, or the platform's (a start from a
 * template, Restart, Open as me, a submission opened as a notebook). Waits until the
 * application and the helpers are up and the platform's extension has said who the user
 * is (as `lab.goto` and `lab.reload` do).
 *
 * No galata fixture: those mock the user, settings and workspace and start from one base
 * URL with no log-in, where these pages are the platform's real users, logged in first.
 */
export async function labOf(page: Page, notebook: string): Promise<IJupyterLabPageFixture> {
  const ready = async (shown: Page) => {
    await expect(shown.locator('#jupyterlab-splash')).toHaveCount(0, { timeout: 90_000 });
    await expect(shown.locator('body')).toHaveAttribute('data-cgu-access', /owner|edit|read/, {
      timeout: 90_000
    });
  };
  await ready(page);
  const lab = galata.addHelpersToPage(page, `${new URL(page.url()).origin}${notebook}`, ready, '/lab');
  // What galata's own goto waits for, after a navigation of ours: the plugins started,
  // its helpers there and holding the application.
  await lab.waitForCondition(() =>
    page.evaluate(async () => {
      const app = (window as any).jupyterapp;
      if (typeof app !== 'object') {
        return false;
      }
      await app.started;
      return typeof (window as any).galata?.app === 'object';
    })
  );
  return lab;
}
