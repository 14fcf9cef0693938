import { galata, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { APIRequestContext, expect, Page, request, TestInfo } from '@playwright/test';
import { execFileSync } from 'child_process';
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

/**
 * Create `owner`'s notebook `name` (1 CPU, 1 GiB) and start it, waiting until it runs;
 * with `galata`, drivable by galata's helpers from that first start (galataFromStart).
 */
export async function startNotebook(
  api: APIRequestContext,
  owner: string,
  name: string,
  options: { galata?: boolean } = {}
): Promise<void> {
  await stopRunning(api, owner);
  expect((await api.post('/api/notebooks', { data: { name, cpu: 1, memory: '1Gi' } })).status()).toBe(201);
  if (options.galata) {
    galataFromStart(owner, name);
  }
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
 * The platform's data folder: named by playwright.config.ts (CGU_UI_DATA, which the workers
 * and start-platform.sh inherit), made by start-platform.sh, gone when the run ends.
 */
export function platformData(): string {
  const data = process.env.CGU_UI_DATA;
  if (!data) {
    throw new Error('CGU_UI_DATA is not set: the UI tests run through playwright.config.ts');
  }
  return data;
}

let galataHelpers: string | undefined;

/**
 * Make `owner`'s notebook `name` drivable by galata from its next start, the first one
 * included, with no restart. Two settings in the server's config file: load galata's
 * in-page helpers (the lab extension JupyterLab ships for its own UI tests) and show
 * JupyterLab's application object to the page, which those helpers drive. The file is the
 * one in the server's Jupyter config directory (a `jupyter_server_config.d` there would be
 * read for server extensions only), which the local backend puts in the notebook's own home
 * (JUPYTER_CONFIG_DIR = <home>/.jupyter, the home <data>/state/homes/<owner>/<name>, made at
 * the notebook's first start or first copy of files). A home not made yet is made here, and
 * the backend gives it and what is in it to the account when it prepares it
 * (local_homes.prepare_home); a home already there gives its owner to the new folder and
 * file. Only this notebook's server reads them: nothing of the platform's own configuration
 * changes, so no notebook a spec does not name here (another spec's, anyone's outside the
 * tests) carries test helpers; this platform itself is the UI tests' own, made by
 * start-platform.sh, with only their accounts.
 */
export function galataFromStart(owner: string, name: string): void {
  galataHelpers ??= execFileSync(
    path.resolve(__dirname, '../../.venv/bin/python'),
    ['-c', 'import jupyterlab.galata, pathlib; print(pathlib.Path(jupyterlab.galata.__file__).parent)'],
    { encoding: 'utf8' }
  ).trim();
  const home = path.join(platformData(), 'state', 'homes', owner, name);
  const folder = path.join(home, '.jupyter');
  const file = path.join(folder, 'jupyter_server_config.json');
  const existed = fs.existsSync(home);
  const config = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  config.LabServerApp = { ...config.LabServerApp, extra_labextensions_path: [galataHelpers] };
  config.LabApp = { ...config.LabApp, expose_app_in_browser: true };
  fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, JSON.stringify(config), { mode: 0o600 });
  if (existed) {
    const { uid, gid } = fs.statSync(home);
    fs.chownSync(folder, uid, gid);
    fs.chownSync(file, uid, gid);
  }
}

/**
 * Make `owner`'s running notebook `name` drivable by galata (galataFromStart) and restart
 * it so that its server reads the settings: for a notebook a spec cannot prepare before its
 * first start. `page` is any page of a browser context logged in as the owner, as every
 * spec has one: the API token for the restart is made on a page of its own in that context,
 * and `page` stays where it is.
 */
export async function loadGalata(page: Page, owner: string, name: string): Promise<void> {
  galataFromStart(owner, name);
  const own = await page.context().newPage();
  try {
    await own.goto('/notebooks');
    const api = await asToken(new URL(own.url()).origin, await apiToken(own));
    try {
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
 * `lab.kernel`...) for the notebook at `notebook`, prepared by galataFromStart; opens
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
