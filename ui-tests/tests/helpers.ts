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
