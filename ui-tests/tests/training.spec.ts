import { expect, Page, test, TestInfo } from '@playwright/test';
import { execFileSync } from 'child_process';
import * as path from 'path';
import { login, snapshot } from './helpers';

/**
 * Training jobs on the local backend, on the page both backends share: the admin declares the
 * PyTorch recipe's environment (torch from PyPI, built once per machine by
 * tests/test_local_training_env.py with the platform's builder), a student submits
 * a two-process gloo all-reduce with the form, and reads the master's and the worker's logs
 * as they arrive, until the job has succeeded.
 */
const COMMAND =
  'python -c "import torch, torch.distributed as d; d.init_process_group(\'gloo\'); ' +
  "t = torch.ones(1) * (d.get_rank() + 1); d.all_reduce(t); print('rank', d.get_rank(), 'sum', t.item()); " +
  'd.destroy_process_group()"';

const ROOT = path.resolve(__dirname, '../..');

/** The prefix of the cached PyTorch environment (built first if this machine has none). */
function pytorchPrefix(): string {
  const out = execFileSync(path.join(ROOT, '.venv/bin/python'), ['-m', 'tests.test_local_training_env'], {
    cwd: ROOT,
    encoding: 'utf-8',
    timeout: 15 * 60_000
  });
  return out.trim().split('\n').pop()!;
}

/** Call the API from the logged-in page, as its own scripts do (with the CSRF token). */
async function call(page: Page, method: string, url: string, body?: unknown): Promise<any> {
  return page.evaluate(
    async ({ method, url, body }) => {
      const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')!.content;
      const response = await fetch(url, {
        method,
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
        body: body === undefined ? undefined : JSON.stringify(body)
      });
      return { status: response.status, body: await response.json() };
    },
    { method, url, body }
  );
}

test('a student runs a two-process training job and reads both ranks\u2019 logs', async ({ page }, testInfo: TestInfo) => {
  test.setTimeout(15 * 60_000);
  await login(page, 'ui-admin');
  const built = await call(page, 'PUT', '/api/environments/pytorch', { display_name: 'PyTorch', local_prefix: pytorchPrefix() });
  expect(built.status).toBe(200);
  await page.context().clearCookies();

  await login(page, 'ui-student');
  await page.goto('/training');
  await expect(page.locator('label[for="j-image"]')).toHaveText('Environment');
  await page.getByLabel('Name').fill('ui-allreduce');
  await page.getByLabel('Environment').fill('pytorch');
  await page.getByLabel('Command').fill(COMMAND);
  await page.getByLabel('Workers').fill('1');
  await page.getByLabel('CPUs per replica').fill('0.5');
  await page.getByLabel('Memory per replica').fill('1Gi');
  await page.getByRole('button', { name: 'Submit' }).click();

  const row = page.locator('#jobs tr[data-job="ui-allreduce"]');
  await expect(row).toBeVisible();
  await row.getByRole('button', { name: 'Logs' }).click();
  await expect(page.locator('#logs')).toContainText('rank 0 sum 3.0', { timeout: 120_000 });
  await page.getByLabel('Replica', { exact: true }).selectOption({ label: 'worker 0' });
  await expect(page.locator('#logs')).toContainText('rank 1 sum 3.0');
  // The list follows the job until it ends, without a reload.
  await expect(row).toContainText('Succeeded', { timeout: 120_000 });
  await expect(row).toContainText('all 2 processes finished');
  await snapshot(page, testInfo, '120-training-logs');
  await call(page, 'DELETE', '/api/training/ui-student/ui-allreduce');
});
