import { APIRequestContext, expect, Page, request, TestInfo } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

export const PASSWORD = 'ui-test-password';
const SCREENSHOTS = path.resolve(__dirname, '../../artifacts/screenshots');

export async function login(page: Page, name: string): Promise<void> {
  await page.goto('/login');
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
