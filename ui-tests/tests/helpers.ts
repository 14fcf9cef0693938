import { expect, Page, TestInfo } from '@playwright/test';
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
