import { APIRequestContext, expect, Page, Request, test } from '@playwright/test';
import { execFileSync } from 'child_process';
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
 * When a page's notebook ends for it, and what a read-only view lets a viewer do:
 *
 * - a read-only viewer's Shift+Enter, insert, delete, cut, paste and move change nothing in their
 *   view (the toast says why);
 * - a visitor whose share is revoked: the tab falls silent (JupyterLab's own pollers and
 *   connections and the extension's stop), instead of a flood of refused requests;
 * - a kernel killed for the notebook's memory limit: the page says so, with the Resize action,
 *   where JupyterLab alone says only that the kernel restarted;
 * - a notebook server killed under its owner: only the platform's "Your notebook stopped"
 *   shows, never JupyterLab's "Kernel died unexpectedly" / "Error Starting Kernel" first.
 *
 * JupyterLab itself is driven through galata's helpers (helpers.ts: openLab).
 */
const NOTEBOOK = '/notebook/ui-student/ends';

async function put(api: APIRequestContext, path: string, body: object): Promise<void> {
  const response = await api.put(`${NOTEBOOK}/api/contents/${path}`, { data: body });
  expect([200, 201]).toContain(response.status());
}

/** Every request the page sends from now on, with when it was sent. */
function recordRequests(page: Page): { at: number; url: string }[] {
  const seen: { at: number; url: string }[] = [];
  page.on('request', (request: Request) => seen.push({ at: Date.now(), url: request.url() }));
  return seen;
}

/** The requests of a window, grouped by path (for the failure message). */
function byPath(requests: { url: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { url } of requests) {
    const path = new URL(url).pathname.replace(/[0-9a-f-]{36}/g, '<id>');
    counts[path] = (counts[path] ?? 0) + 1;
  }
  return counts;
}

test.describe.serial('when a notebook ends for the page', () => {
  let api: APIRequestContext;

  test.beforeAll(async ({ browser, baseURL }) => {
    const owner = await (await browser.newContext()).newPage();
    await login(owner, 'ui-student');
    api = await asToken(baseURL!, await apiToken(owner));
    await startNotebook(api, 'ui-student', 'ends', { galata: true });
    await owner.close();
    await put(api, 'notes.txt', { type: 'file', format: 'text', content: 'TA notes' });
    await put(api, 'hw.ipynb', notebookJson(['x = 1', 'print("hello from the owner")']));
  });

  test.afterAll(async () => {
    await api.post('/api/notebooks/ui-student/ends/stop?wait=true');
    await api.dispose();
  });

  test('a read-only viewer cannot add, delete, move, cut or paste cells', async ({ browser }, testInfo) => {
    const share = await (
      await api.post('/api/notebooks/ui-student/ends/shares', { data: { grantee: 'ui-pupil', access: 'read' } })
    ).json();
    const viewer = await (await browser.newContext()).newPage();
    await login(viewer, 'ui-pupil');
    const lab = await openLab(viewer, NOTEBOOK, 'tree/hw.ipynb');
    await expect(viewer.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    const cells = viewer.locator('.jp-NotebookPanel .jp-Notebook .jp-Cell');
    await expect(cells).toHaveCount(2, { timeout: 30_000 });
    expect(await lab.notebook.getCellCount()).toBe(2);
    const sources = () => cells.locator('.jp-InputArea-editor').allInnerTexts();
    const before = await sources();

    // Shift+Enter on the last cell: JupyterLab would run it and add an empty cell below.
    expect(await lab.notebook.selectCells(1)).toBe(true);
    expect(await lab.notebook.isCellInEditingMode(1)).toBe(false);
    await viewer.keyboard.press('Shift+Enter');
    await expect(viewer.getByText('read-only: you cannot run cells').first()).toBeVisible({ timeout: 10_000 });
    await expect(cells).toHaveCount(2);
    await snapshot(viewer, testInfo, '140-readonly-shift-enter');

    // The command-mode keys of structural edits, and the commands themselves.
    await viewer.keyboard.press('Escape');
    for (const key of ['b', 'a', 'x', 'v', 'Shift+v', 'c', 'd', 'd', 'Control+Shift+ArrowUp']) {
      await viewer.keyboard.press(key);
    }
    // The notebook toolbar's buttons for the same.
    for (const item of ['insert', 'cut', 'paste']) {
      expect(await lab.notebook.clickToolbarItem(item), item).toBe(true);
    }
    await viewer.waitForTimeout(500);
    await expect(cells).toHaveCount(2);
    expect(await lab.notebook.getCellCount()).toBe(2);
    expect(await sources()).toEqual(before);
    await expect(viewer.getByText('you cannot change the cells here').first()).toBeVisible();
    await snapshot(viewer, testInfo, '141-readonly-no-structural-edits');
    await api.delete(`/api/notebooks/ui-student/ends/shares/${share.id}`);
    await viewer.close();
  });

  for (const access of ['edit', 'read']) {
    test(`a revoked visitor's tab falls silent (${access})`, async ({ browser }, testInfo) => {
      const share = await (
        await api.post('/api/notebooks/ui-student/ends/shares', { data: { grantee: 'ui-ta', access } })
      ).json();
      const ta = await (await browser.newContext()).newPage();
      await login(ta, 'ui-ta');
      const lab = await openLab(ta, NOTEBOOK, 'tree/notes.txt');
      await expect(ta.locator('.jp-MainAreaWidget').filter({ hasText: 'TA notes' })).toBeVisible({ timeout: 60_000 });
      await lab.goto('tree/hw.ipynb');
      await expect(ta.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
      expect(await lab.notebook.isOpen('hw.ipynb')).toBe(true);
      if (access === 'edit') {
        // An editor's notebook has a kernel, whose connection must not retry for ever either.
        await expect(ta.locator('#jp-main-statusbar').getByText(/\| Idle/)).toBeVisible({ timeout: 90_000 });
      }
      const requests = recordRequests(ta);
      const revokedAt = Date.now();
      expect((await api.delete(`/api/notebooks/ui-student/ends/shares/${share.id}`)).status()).toBe(200);
      await expect(ta.locator('.cgu-RevokedDialog')).toBeVisible({ timeout: 45_000 });
      // Wait past the moment the flood began (about 5 s after the revoke), then count 10 s.
      const seen = Date.now();
      await ta.waitForTimeout(Math.max(0, revokedAt + 6_000 - seen));
      const from = Date.now();
      await ta.waitForTimeout(10_000);
      const window = requests.filter(r => r.at >= from);
      const shownAfter = (seen - revokedAt) / 1000;
      console.log(
        `revoked (${access}): dialog after ${shownAfter.toFixed(1)} s; ${requests.length} requests in ` +
          `${((Date.now() - revokedAt) / 1000).toFixed(1)} s, ${window.length} in the last 10 s:`,
        JSON.stringify(byPath(window))
      );
      await snapshot(ta, testInfo, `142-revoked-${access}-quiet`);
      expect(window.length, JSON.stringify(byPath(window))).toBeLessThanOrEqual(5);
      await ta.close();
    });
  }

  test('a kernel over the memory limit: the page says the notebook ran out of memory', async ({ page }, testInfo) => {
    test.setTimeout(180_000);
    // Two gigabytes, 64 MiB at a time (a bytearray is zero-filled: every page is touched),
    // in a notebook of 1 GiB: the kernel's OOM killer stops the kernel.
    await put(api, 'hog.ipynb', notebookJson(['blocks = [bytearray(64 * 2**20) for _ in range(32)]']));
    await login(page, 'ui-student');
    // A workspace of its own: the default one, which the next test opens, is left as it was.
    const lab = await openLab(page, NOTEBOOK, 'workspaces/memory/tree/hog.ipynb');
    await expect(page.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    await expect(page.locator('#jp-main-statusbar').getByText(/\| Idle/)).toBeVisible({ timeout: 90_000 });
    // The status bar's figures have come once: the count of kills so far is the reference.
    await expect(page.locator('#jp-main-statusbar').getByText(/Mem /)).toBeVisible({ timeout: 30_000 });
    expect(await lab.notebook.selectCells(0)).toBe(true);
    await page.keyboard.press('Shift+Enter');
    const notice = page.getByText('reached its memory limit of 1.0 GiB');
    await expect(notice).toBeVisible({ timeout: 60_000 });
    await expect(page.getByRole('button', { name: 'Resize…' })).toBeVisible();
    await page.waitForTimeout(1_000); // the toast's slide in
    await snapshot(page, testInfo, '144-out-of-memory-notice');
    // JupyterLab's own word on it, a dialog the notice leaves as it is.
    await expect(page.locator('.jp-Dialog')).toContainText('appears to have died');
  });

  test('a killed server shows only the platform\'s "Your notebook stopped"', async ({ page }, testInfo) => {
    test.setTimeout(300_000);
    await login(page, 'ui-student');
    const lab = await openLab(page, NOTEBOOK, 'tree/hw.ipynb');
    await expect(page.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    expect(await lab.notebook.isActive('hw.ipynb')).toBe(true);
    await expect(page.locator('#jp-main-statusbar').getByText(/\| Idle/)).toBeVisible({ timeout: 90_000 });
    // Every dialog that appears, in order, with its first words.
    const dialogs: string[] = [];
    await page.exposeFunction('cguDialogSeen', (text: string) => dialogs.push(text));
    await page.evaluate(() => {
      const seen = new WeakSet<Element>();
      new MutationObserver(() => {
        for (const dialog of Array.from(document.querySelectorAll('.jp-Dialog'))) {
          if (!seen.has(dialog)) {
            seen.add(dialog);
            // Its title and body are drawn a moment after the dialog is attached.
            setTimeout(() => {
              const text = (dialog.textContent ?? '').replace(/\s+/g, ' ').slice(0, 120);
              (window as unknown as { cguDialogSeen(t: string): void }).cguDialogSeen(text);
            }, 100);
          }
        }
      }).observe(document.body, { childList: true, subtree: true });
    });
    const requests = recordRequests(page);
    const killed = Date.now();
    // No shell: its own command line would match the pattern and be killed too.
    execFileSync('pkill', ['-KILL', '-f', '--', `--ServerApp.base_url=${NOTEBOOK}/`]);
    const stopped = page.locator('.cgu-StoppedDialog');
    await expect(stopped).toBeVisible({ timeout: 30_000 });
    const shown = (Date.now() - killed) / 1000;
    await expect(stopped).toContainText('Your notebook stopped');
    // Whatever JupyterLab would raise a moment later must not show either; and while it is
    // stopped, JupyterLab's pollers back off (answered by the page) instead of asking.
    const from = Date.now();
    await page.waitForTimeout(8_000);
    const window = requests.filter(r => r.at >= from);
    console.log(
      `killed: the platform's dialog after ${shown.toFixed(1)} s; dialogs seen: ${JSON.stringify(dialogs)}; ` +
        `${requests.length} requests since the kill, ${window.length} in the 8 s after the dialog: ` +
        JSON.stringify(byPath(window))
    );
    // None of JupyterLab's own requests reach the network (the page answers them); the
    // platform's check asks at most once a second, and each of the extension's pollers
    // no more often than its interval: the resources every 5 s (its default), backing off
    // after the first refusal to 5-15 s, so twice at most in 8 s; the others (who is here)
    // every 10 s or longer, so once.
    const counts: Record<string, number> = byPath(window);
    expect(Object.keys(counts).filter(path => !path.includes('/cgu-lab/'))).toEqual([]);
    const most = (path: string) => (path.endsWith('/cgu-lab/info') ? 8 : path.endsWith('/cgu-lab/resources') ? 2 : 1);
    for (const [path, count] of Object.entries(counts)) {
      expect(count, path).toBeLessThanOrEqual(most(path));
    }
    await snapshot(page, testInfo, '143-killed-only-platform-dialog');
    expect(dialogs.filter(text => !text.includes('Your notebook stopped'))).toEqual([]);
    await expect(page.locator('.jp-Dialog')).toHaveCount(1);
    await expect(stopped).toBeVisible();
  });
});
