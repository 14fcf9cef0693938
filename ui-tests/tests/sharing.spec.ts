import { expect, test } from '@playwright/test';
import { apiToken, asToken, labOf, login, openLab, snapshot, startNotebook } from './helpers';

/**
 * A notebook shared read-only with a TA, then revoked, and its owner's resize within the
 * quota. JupyterLab itself is driven through galata's helpers (helpers.ts: openLab); the
 * platform's own dialogs and pages stay plain Playwright.
 */
const NOTEBOOK = '/notebook/ui-student/shared';

test.describe.serial('sharing a notebook with a TA', () => {
  test('the owner shares read-only, the TA can read but not run or save, then loses access', async ({
    browser,
    baseURL
  }, testInfo) => {
    const owner = await (await browser.newContext()).newPage();
    await login(owner, 'ui-student');
    const api = await asToken(baseURL!, await apiToken(owner));
    await startNotebook(api, 'ui-student', 'shared', { galata: true });
    const notebook = {
      type: 'notebook',
      format: 'json',
      content: {
        cells: [{ cell_type: 'code', source: 'print("hello from the owner")', metadata: {}, outputs: [], execution_count: null }],
        metadata: { kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' } },
        nbformat: 4,
        nbformat_minor: 5
      }
    };
    expect((await api.put(`${NOTEBOOK}/api/contents/hw.ipynb`, { data: notebook })).status()).toBe(201);

    // The owner opens the notebook and shares it read-only with the TA.
    const lab = await openLab(owner, NOTEBOOK, 'tree/hw.ipynb');
    await expect(owner.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    expect(await lab.notebook.isOpen('hw.ipynb')).toBe(true);
    await owner.locator('[data-cgu="share-button"]').first().click();
    const dialog = owner.locator('[data-cgu="share-dialog"]');
    await expect(dialog).toBeVisible();
    await owner.locator('[data-cgu="share-scope-notebook"]').check();
    await owner.locator('[data-cgu="share-search"]').fill('ui-ta');
    await owner.locator('[data-cgu="share-suggestion"][data-grantee="user:ui-ta"]').click();
    await owner.locator('[data-cgu="share-access-read"]').check();
    await owner.locator('[data-cgu="share-submit"]').click();
    await expect(owner.locator('[data-cgu="share-row"]')).toHaveCount(1);
    await expect(owner.locator('[data-cgu="share-link"]')).toBeVisible();
    await snapshot(owner, testInfo, '10-owner-shares-readonly');

    // The TA opens it: a clear notice, files read-only, nothing runs or saves.
    const ta = await (await browser.newContext()).newPage();
    await login(ta, 'ui-ta');
    await expect(ta.getByRole('link', { name: /shared/ })).toBeVisible();
    const taLab = await openLab(ta, NOTEBOOK, 'tree/hw.ipynb');
    await expect(ta.locator('body')).toHaveAttribute('data-cgu-access', 'read', { timeout: 60_000 });
    await expect(ta.locator('[data-cgu="access-status"]')).toHaveText('Read-only');
    await expect(ta.getByText(/read-only: you can open and read files/).first()).toBeVisible();
    await expect(ta.locator('.jp-NotebookPanel')).toBeVisible();
    await expect(ta.getByText('hello from the owner')).toBeVisible();
    expect(await taLab.notebook.getCellCount()).toBe(1);
    await snapshot(ta, testInfo, '11-ta-reads-readonly');
    const attempts = await ta.evaluate(async base => {
      const cookie = document.cookie.split('; ').find(c => c.startsWith('_xsrf='))?.slice(6) ?? '';
      const headers = { 'Content-Type': 'application/json', 'X-XSRFToken': decodeURIComponent(cookie) };
      const save = await fetch(`${base}/api/contents/hw.ipynb`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ type: 'file', format: 'text', content: 'overwritten' })
      });
      const run = await fetch(`${base}/api/kernels`, { method: 'POST', headers, body: '{"name": "python3"}' });
      const terminal = await fetch(`${base}/api/terminals`, { method: 'POST', headers });
      return [save.status, run.status, terminal.status];
    }, NOTEBOOK);
    expect(attempts).toEqual([403, 403, 403]);

    // The owner revokes; the TA's next request is refused.
    await owner.locator('[data-cgu="share-revoke"]').first().click();
    await expect(owner.locator('[data-cgu="share-list-empty"]')).toBeVisible();
    await snapshot(owner, testInfo, '12-owner-revoked');
    const after = await ta.goto(`${NOTEBOOK}/lab/tree/hw.ipynb`);
    expect(after?.status()).toBe(404);
    await snapshot(ta, testInfo, '13-ta-lost-access');
    await api.dispose();
  });

  test('the owner resizes within the quota and is refused beyond it', async ({ page }, testInfo) => {
    await login(page, 'ui-student');
    await openLab(page, NOTEBOOK);
    await expect(page.locator('[data-cgu="resources-status"]')).toBeVisible({ timeout: 60_000 });
    await page.locator('[data-cgu="resources-status"]').click();
    await expect(page.locator('[data-cgu="resources-panel"]')).toBeVisible();
    await snapshot(page, testInfo, '14-resources-panel');

    await page.locator('[data-cgu="resize-button"]').click();
    await expect(page.locator('[data-cgu="resize-dialog"]')).toBeVisible();
    await page.locator('[data-cgu="resize-cpus"]').fill('64');
    await page.getByRole('button', { name: 'Resize and restart' }).click();
    await expect(page.locator('[data-cgu="resize-error"]')).toContainText('your quota allows');
    await snapshot(page, testInfo, '15-resize-refused');

    await page.locator('[data-cgu="resize-cpus"]').fill('2');
    await page.getByRole('button', { name: 'Resize and restart' }).click();
    await page.waitForURL(/\/notebook\/auto-start\/ui-student\/shared/, { timeout: 30_000 });
    await snapshot(page, testInfo, '16-resize-progress');
    await page.waitForURL(/\/notebook\/ui-student\/shared\/lab/, { timeout: 120_000 });
    // Back in JupyterLab, restarted by the platform (its server loads galata's helpers again).
    await labOf(page, NOTEBOOK);
    await expect(page.locator('[data-cgu="resources-status"]')).toBeVisible({ timeout: 60_000 });
    const requested = await page.evaluate(async () => {
      const response = await fetch('/notebook/ui-student/shared/cgu-lab/resources');
      return (await response.json()).requested.cpu_milli;
    });
    expect(requested).toBe(2000);
  });
});
