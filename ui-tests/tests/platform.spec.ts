import { expect, test } from '@playwright/test';
import { apiToken, asToken, galataFromStart, labOf, login, snapshot, stopRunning } from './helpers';

test('a student logs in, creates a notebook and reaches JupyterLab through the auto-start page', async ({
  page,
  baseURL
}, testInfo) => {
  await login(page, 'ui-student');
  await stopRunning(await asToken(baseURL!, await apiToken(page)), 'ui-student');
  await snapshot(page, testInfo, '01-my-notebooks-empty');

  await page.getByRole('link', { name: 'New notebook' }).click();
  await page.getByLabel('Name').fill('demo');
  await page.getByLabel('CPUs').fill('1');
  await page.getByLabel('Memory').fill('1Gi');
  await expect(page.getByText(/Your quota:/)).toBeVisible();
  await snapshot(page, testInfo, '02-new-notebook-form');
  await page.getByRole('button', { name: 'Create', exact: true }).click();

  const row = page.locator('tr[data-notebook="ui-student/demo"]');
  await expect(row).toContainText('stopped');
  await snapshot(page, testInfo, '03-notebook-created');
  galataFromStart('ui-student', 'demo');

  // Opening the address of a stopped notebook offers to start it.
  await page.goto('/notebook/ui-student/demo/lab');
  await expect(page).toHaveURL(/\/notebook\/auto-start\/ui-student\/demo/);
  await expect(page.getByText('This notebook is')).toContainText('stopped');
  await snapshot(page, testInfo, '04-auto-start-page');
  await page.getByRole('button', { name: 'Start notebook' }).click();
  await expect(page.locator('#progress-log li').first()).toBeVisible();
  await snapshot(page, testInfo, '05-start-progress');

  // Progress ends in JupyterLab itself.
  await page.waitForURL(/\/notebook\/ui-student\/demo\/lab/, { timeout: 120_000 });
  const lab = await labOf(page, '/notebook/ui-student/demo');
  await expect(page.locator('#jp-main-dock-panel')).toBeVisible({ timeout: 120_000 });
  await expect(lab.launcher).toBeVisible({ timeout: 60_000 });
  expect(await lab.activity.isTabActive('Launcher')).toBe(true);
  await snapshot(page, testInfo, '06-jupyterlab');

  // The lab extension offers the way back to the platform.
  await lab.menu.open('File');
  const back = await lab.menu.getMenuItemLocator('File>Back to cgu-lab portal');
  expect(back).not.toBeNull();
  await expect(back!).toBeVisible();
  await lab.menu.closeAll();
  expect(await lab.menu.isAnyOpen()).toBe(false);
});

test('another user cannot open the notebook', async ({ page }) => {
  await login(page, 'ui-ta');
  const response = await page.goto('/notebook/ui-student/demo/lab');
  expect(response?.status()).toBe(404);
});

test('an admin watches live load on the monitoring page', async ({ page }, testInfo) => {
  await login(page, 'ui-admin');
  await page.goto('/admin/monitoring');
  await expect(page.locator('#summary dt').first()).toBeVisible({ timeout: 30_000 });
  await expect(page.locator('#chart-cpu')).toBeVisible();
  // The charts are drawn by Chart.js on canvases once a few samples exist.
  await expect
    .poll(async () => page.locator('#chart-cpu').evaluate((c: HTMLCanvasElement) => c.width), { timeout: 30_000 })
    .toBeGreaterThan(0);
  await expect(page.locator('#notebooks-table')).toContainText('ui-student');
  await snapshot(page, testInfo, '30-monitoring');
  await page.goto('/admin/gpus');
  await expect(page.getByRole('heading', { name: 'GPUs' }).first()).toBeVisible();
  await snapshot(page, testInfo, '31-gpu-types');
});
