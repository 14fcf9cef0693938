import { APIRequestContext, expect, test } from '@playwright/test';
import {
  apiToken,
  asToken,
  login,
  notebookJson,
  openLab,
  snapshot,
  startNotebook
} from './helpers';

/**
 * A teaching day inside JupyterLab, without a single raw error: the way back
 * to the portal, the Submit dialog that preselects what the notebook reads, a
 * TA whose share is revoked (dialog, status bar, a reload that shows a page),
 * a read-only viewer whose "run cell" says why at once, and a notebook culled
 * for idleness that says so with a Restart button.
 *
 * JupyterLab itself is driven through galata's helpers (helpers.ts: openLab).
 */
const NOTEBOOK = '/notebook/ui-student/day';

async function put(api: APIRequestContext, path: string, body: object): Promise<void> {
  const response = await api.put(`${NOTEBOOK}/api/contents/${path}`, { data: body });
  expect([200, 201]).toContain(response.status());
}

test.describe.serial('a teaching day in JupyterLab', () => {
  let api: APIRequestContext;
  let admin: APIRequestContext;

  test.beforeAll(async ({ browser, baseURL }) => {
    const owner = await (await browser.newContext()).newPage();
    await login(owner, 'ui-student');
    api = await asToken(baseURL!, await apiToken(owner));
    const ops = await (await browser.newContext()).newPage();
    await login(ops, 'ui-admin');
    admin = await asToken(baseURL!, await apiToken(ops));
    await startNotebook(api, 'ui-student', 'day', { galata: true });
    await put(api, 'data', { type: 'directory' });
    await put(api, 'data/iris.csv', { type: 'file', format: 'text', content: 'a,b\n1,2\n3,4\n' });
    await put(api, 'helper.py', { type: 'file', format: 'text', content: 'SCALE = 2\n' });
    await put(api, 'notes.txt', { type: 'file', format: 'text', content: 'TA notes' });
    await put(
      api,
      'hw.ipynb',
      notebookJson([
        "import helper\nimport pandas as pd\ndf = pd.read_csv('data/iris.csv')",
        'print("hello from the owner")'
      ])
    );
  });

  test.afterAll(async () => {
    await admin.put('/api/culling/policy', { data: { idle_minutes: 60, warn_minutes: 10 } });
    await api.post('/api/notebooks/ui-student/day/stop?wait=true');
    await api.dispose();
    await admin.dispose();
  });

  test('the way back to the portal and a Submit dialog that preselects what the notebook reads', async ({
    page
  }, testInfo) => {
    await login(page, 'ui-student');
    const lab = await openLab(page, NOTEBOOK, 'tree/hw.ipynb');
    await expect(page.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    expect(await lab.notebook.isOpen('hw.ipynb')).toBe(true);
    // A top-bar button and a File menu item, both declared in the settings schema.
    const topBar = page.locator('#jp-top-bar [data-command="cgu-lab:open-portal"]');
    await expect(topBar).toBeVisible();
    await lab.menu.open('File');
    const portalItem = await lab.menu.getMenuItemLocator('File>Back to cgu-lab portal');
    expect(portalItem).not.toBeNull();
    await expect(portalItem!).toBeVisible();
    await snapshot(page, testInfo, '60-lab-portal-menu');
    await lab.menu.closeAll();
    expect(await lab.menu.isAnyOpen()).toBe(false);

    await page.locator('[data-cgu="submit-button"]').first().click();
    const dialog = page.locator('[data-cgu="submit-dialog"]');
    await expect(dialog).toBeVisible();
    const suggested = dialog.locator('[data-cgu="submit-suggestion"]');
    await expect(suggested).toHaveCount(3);
    await expect(dialog.locator('[data-cgu="submit-suggestion"][data-path="data/iris.csv"]')).toContainText(
      '12 B'
    );
    await expect(dialog.locator('[data-cgu="submit-suggestion"][data-path="helper.py"]')).toContainText(
      'read by the notebook'
    );
    await expect(dialog.locator('[data-cgu="submit-suggestion-total"]')).toContainText('3 preselected items');
    await expect(dialog.locator('[data-cgu="picker-checkbox"][data-path="data/iris.csv"]')).toBeChecked({
      timeout: 30_000
    });
    await snapshot(page, testInfo, '61-lab-submit-preselected');
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();

    await topBar.click();
    await expect(page.getByRole('heading', { name: 'My notebooks' })).toBeVisible({ timeout: 30_000 });
  });

  test('a TA keeps their own layout, loses access with a dialog, and a reload shows a page', async ({
    browser
  }, testInfo) => {
    const share = await (
      await api.post('/api/notebooks/ui-student/day/shares', { data: { grantee: 'ui-ta', access: 'edit' } })
    ).json();
    const ta = await (await browser.newContext()).newPage();
    await login(ta, 'ui-ta');
    const lab = await openLab(ta, NOTEBOOK, 'tree/notes.txt');
    await expect(ta.locator('[data-cgu="access-status"]')).toHaveText('Shared: can edit');
    await expect(ta.locator('.jp-MainAreaWidget').filter({ hasText: 'TA notes' })).toBeVisible({ timeout: 60_000 });
    expect(await lab.activity.isTabActive('notes.txt')).toBe(true);
    // The TA's layout is the TA's: the owner's workspace never learns of notes.txt.
    await expect
      .poll(async () => JSON.stringify(await (await api.get(`${NOTEBOOK}/lab/api/workspaces/default`)).json()), {
        timeout: 20_000
      })
      .not.toContain('notes.txt');

    expect((await api.delete(`/api/notebooks/ui-student/day/shares/${share.id}`)).status()).toBe(200);
    // JupyterLab may show its own error first (a file it re-reads is refused, with the
    // platform's sentence): dialogs queue, so ours follows once that one is closed.
    const revoked = ta.locator('.cgu-RevokedDialog');
    const other = ta.locator('.jp-Dialog:not(.cgu-RevokedDialog)').filter({ hasText: 'no longer have access' });
    await expect
      .poll(
        async () => {
          if (await other.isVisible()) {
            await other.getByRole('button').last().click();
          }
          return revoked.isVisible();
        },
        { timeout: 45_000 }
      )
      .toBe(true);
    await expect(revoked).toContainText("Your access to ui-student's notebook");
    await expect(ta.getByText('Server Connection Error')).toHaveCount(0);
    await snapshot(ta, testInfo, '62-lab-ta-access-revoked');
    await revoked.getByRole('button', { name: 'Stay here' }).click();
    await expect(ta.locator('[data-cgu="access-status"]')).toHaveText('Access revoked');

    const reload = await ta.reload();
    expect(reload?.status()).toBe(404);
    expect(reload?.headers()['content-type']).toContain('text/html');
    await expect(ta.getByText('you no longer have access', { exact: false })).toBeVisible();
    await expect(ta.getByRole('link', { name: 'Back to the cgu-lab portal' })).toBeVisible();
    await snapshot(ta, testInfo, '63-lab-ta-reload-after-revoke');
    await ta.close();
  });

  test('a read-only viewer is told at once that cells cannot run, and no cell waits at [*]', async ({
    browser
  }, testInfo) => {
    const share = await (
      await api.post('/api/notebooks/ui-student/day/shares', { data: { grantee: 'ui-pupil', access: 'read' } })
    ).json();
    const viewer = await (await browser.newContext()).newPage();
    await login(viewer, 'ui-pupil');
    const lab = await openLab(viewer, NOTEBOOK, 'tree/hw.ipynb');
    await expect(viewer.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    const cell = (await lab.notebook.getCellLocator(1))!;
    expect(await lab.notebook.selectCells(1)).toBe(true);
    expect(await lab.notebook.isCellInEditingMode(1)).toBe(false);
    await viewer.keyboard.press('Shift+Enter');
    await expect(viewer.getByText('read-only: you cannot run cells').first()).toBeVisible({ timeout: 10_000 });
    await expect(cell.locator('.jp-InputPrompt')).not.toContainText('*');
    await snapshot(viewer, testInfo, '64-lab-readonly-run-cell');
    await api.delete(`/api/notebooks/ui-student/day/shares/${share.id}`);
    await viewer.close();
  });

  test('a notebook culled for idleness says so, with a Restart button', async ({ page }, testInfo) => {
    test.setTimeout(300_000);
    await login(page, 'ui-student');
    // The notebook open: its kernel, connected again, is the activity the idle time counts from.
    const lab = await openLab(page, NOTEBOOK, 'tree/hw.ipynb');
    // Idle after 18 s, warned 9 s before; the culler's next pass stops it.
    expect(
      (await admin.put('/api/culling/policy', { data: { idle_minutes: 0.3, warn_minutes: 0.15 } })).status()
    ).toBe(200);
    await lab.reload();
    await expect(page.locator('body')).toHaveAttribute('data-cgu-access', 'owner', { timeout: 60_000 });
    await expect(page.getByText(/idle for .* and stops in/).first()).toBeVisible({ timeout: 60_000 });
    await expect(page.locator('[data-cgu="culling-status"]')).toContainText('Idle: stops in');
    await snapshot(page, testInfo, '65-lab-idle-warning');
    const stopped = page.locator('.cgu-StoppedDialog');
    await expect(stopped).toBeVisible({ timeout: 150_000 });
    await expect(stopped).toContainText('stopped for idleness');
    await expect(stopped).toContainText('restart it to go on');
    await expect(page.getByText('Server Connection Error')).toHaveCount(0);
    await snapshot(page, testInfo, '66-lab-stopped-for-idleness');
    await admin.put('/api/culling/policy', { data: { idle_minutes: 60, warn_minutes: 10 } });
    await stopped.getByRole('button', { name: 'Restart' }).click();
    // Restart starts it at once (no second question): the page says why it had stopped,
    // follows the start and lands back in JupyterLab.
    await page.waitForURL(/\/notebook\/auto-start\/ui-student\/day/, { timeout: 30_000 });
    // Once the culler's stop has ended (on a loaded host the page may first say "stopping").
    await expect(page.getByText(/Last time: Stopped by the idle culler/)).toBeVisible({ timeout: 90_000 });
    await snapshot(page, testInfo, '67-lab-restart-page');
    await page.waitForURL(/\/notebook\/ui-student\/day\/lab/, { timeout: 120_000 });
    await expect(page.locator('body')).toHaveAttribute('data-cgu-access', 'owner', { timeout: 60_000 });
  });
});
