import { APIRequestContext, expect, Locator, Page, test } from '@playwright/test';
import { apiToken, asToken, login, openNotebook, snapshot, startNotebook } from './helpers';

/**
 * Apps inside a notebook, in Chromium: the launcher's "Apps" section opens the Linux desktop
 * (Xvnc + openbox + xterm through noVNC, on the notebook's own origin); keys typed into its
 * terminal run a command whose file the contents API then reads; a read-only viewer watches
 * the same desktop and their keys change nothing; the laptop's clipboard goes into the
 * desktop and back; VS Code (code-server, in a tab of its own on the same origin) opens a file of
 * the home and saves it. (VS Code uses the browser's clipboard itself: nothing to bridge there.)
 */
const NOTEBOOK = '/notebook/ui-student/apps';

test.use({ actionTimeout: 60_000 });

/** noVNC's canvas in the desktop tab, once it shows the desktop. */
async function openDesktopCanvas(page: Page): Promise<Locator> {
  const panel = page.locator('.cgu-DesktopPanel');
  await expect(panel).toHaveAttribute('data-state', 'connected', { timeout: 90_000 });
  const canvas = panel.locator('canvas');
  await expect(canvas).toBeVisible();
  return canvas;
}

/** Click into the terminal (at the desktop's top left, see desktop_session.py) and type a line. */
async function typeInTerminal(page: Page, canvas: Locator, line: string): Promise<void> {
  const box = (await canvas.boundingBox())!;
  await page.mouse.click(box.x + box.width * 0.15, box.y + box.height * 0.15);
  await page.keyboard.type(line, { delay: 15 });
  await page.keyboard.press('Enter');
}

/** How many colours the desktop's picture has: one for an empty screen, many with windows. */
function colours(canvas: Locator): Promise<number> {
  return canvas.evaluate((element: HTMLCanvasElement) => {
    const context = element.getContext('2d')!;
    const { data } = context.getImageData(0, 0, element.width, element.height);
    const seen = new Set<number>();
    for (let i = 0; i < data.length && seen.size < 50; i += 4 * 97) {
      seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    }
    return seen.size;
  });
}

test.describe.serial('apps inside a notebook', () => {
  let api: APIRequestContext;
  let shareId: number;

  async function fileText(path: string): Promise<string | null> {
    const response = await api.get(`${NOTEBOOK}/api/contents/${path}?content=1&type=file&format=text`);
    return response.status() === 200 ? (await response.json()).content : null;
  }

  test.beforeAll(async ({ browser, baseURL }) => {
    const owner = await (await browser.newContext()).newPage();
    await login(owner, 'ui-student');
    api = await asToken(baseURL!, await apiToken(owner));
    await startNotebook(api, 'ui-student', 'apps');
    const share = await api.post('/api/notebooks/ui-student/apps/shares', { data: { grantee: 'ui-ta', access: 'read' } });
    expect(share.status()).toBe(201);
    shareId = (await share.json()).id;
    await owner.close();
  });

  test.afterAll(async () => {
    await api.delete(`/api/notebooks/ui-student/apps/shares/${shareId}`);
    await api.post('/api/notebooks/ui-student/apps/stop?wait=true');
    await api.dispose();
  });

  test('the owner opens the desktop from the launcher and types into its terminal', async ({ page }, testInfo) => {
    test.setTimeout(180_000);
    await login(page, 'ui-student');
    await openNotebook(page, NOTEBOOK);
    const section = page.locator('.jp-Launcher-section', { hasText: 'Apps' });
    await expect(section).toBeVisible({ timeout: 60_000 });
    await snapshot(page, testInfo, '100-apps-launcher');
    await section.locator('.jp-LauncherCard', { hasText: 'Linux desktop' }).click();
    const canvas = await openDesktopCanvas(page);
    // openbox's decorations and the terminal: more than the one colour of an empty screen.
    await expect.poll(() => colours(canvas), { timeout: 30_000 }).toBeGreaterThan(3);
    await snapshot(page, testInfo, '100-desktop-window-manager');

    await expect
      .poll(
        async () => {
          if ((await fileText('from-desktop.txt')) === null) {
            await typeInTerminal(page, canvas, 'echo typed in the desktop > ~/from-desktop.txt');
          }
          return fileText('from-desktop.txt');
        },
        { timeout: 60_000, intervals: [3_000] }
      )
      .toBe('typed in the desktop\n');
    await snapshot(page, testInfo, '100-desktop-terminal-typed');
  });

  test("a read-only viewer watches the desktop and their keys change nothing", async ({ browser }, testInfo) => {
    test.setTimeout(180_000);
    const owner = await (await browser.newContext()).newPage();
    await login(owner, 'ui-student');
    await openNotebook(owner, NOTEBOOK, 'lab?cgu-app=desktop');
    const ownerCanvas = await openDesktopCanvas(owner);

    const ta = await (await browser.newContext()).newPage();
    await login(ta, 'ui-ta');
    await openNotebook(ta, NOTEBOOK, 'lab?cgu-app=desktop');
    await expect(ta.locator('body')).toHaveAttribute('data-cgu-access', 'read');
    const taCanvas = await openDesktopCanvas(ta);
    await expect(ta.locator('.cgu-DesktopPanel-status')).toContainText('Watching the desktop');
    await expect.poll(() => colours(taCanvas), { timeout: 30_000 }).toBeGreaterThan(3);
    await snapshot(ta, testInfo, '100-desktop-read-only-viewer');
    await typeInTerminal(ta, taCanvas, 'echo the viewer typed > ~/from-viewer.txt');
    // The interactive desktop itself is refused to the viewer, whatever their page does.
    const direct = await ta.evaluate(async path => (await fetch(path)).status, `${NOTEBOOK}/desktop/`);
    expect(direct).toBe(403);

    // The owner's keys still arrive after the viewer's: the terminal was listening.
    await expect
      .poll(
        async () => {
          if ((await fileText('after-viewer.txt')) === null) {
            await typeInTerminal(owner, ownerCanvas, 'echo owner after viewer > ~/after-viewer.txt');
          }
          return fileText('after-viewer.txt');
        },
        { timeout: 60_000, intervals: [3_000] }
      )
      .toBe('owner after viewer\n');
    expect(await fileText('from-viewer.txt')).toBeNull();
    await ta.context().close();
    await owner.context().close();
  });

  test("the laptop's clipboard goes into the desktop and back", async ({ page, context }, testInfo) => {
    test.setTimeout(180_000);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await login(page, 'ui-student');
    await openNotebook(page, NOTEBOOK, 'lab?cgu-app=desktop');
    const canvas = await openDesktopCanvas(page);

    // Laptop -> desktop: the page's clipboard is handed over when the pointer comes in.
    await page.evaluate(() => navigator.clipboard.writeText('from the laptop'));
    await page.mouse.move(5, 5);
    await expect
      .poll(
        async () => {
          if ((await fileText('pasted.txt')) === null) {
            const box = (await canvas.boundingBox())!;
            await page.mouse.move(box.x + box.width * 0.15, box.y + box.height * 0.15);
            await typeInTerminal(page, canvas, '/usr/bin/xclip -o -selection clipboard > ~/pasted.txt');
          }
          return fileText('pasted.txt');
        },
        { timeout: 60_000, intervals: [3_000] }
      )
      .toBe('from the laptop');

    // Desktop -> laptop: a program in the desktop copies; the page's clipboard holds it.
    await typeInTerminal(page, canvas, 'printf copied-in-the-desktop | /usr/bin/xclip -selection clipboard');
    await expect
      .poll(() => page.evaluate(() => navigator.clipboard.readText()), { timeout: 30_000 })
      .toBe('copied-in-the-desktop');
    await snapshot(page, testInfo, '100-desktop-clipboard');
  });

  test('VS Code opens a file of the home and saves it', async ({ page }, testInfo) => {
    test.setTimeout(180_000);
    const put = await api.put(`${NOTEBOOK}/api/contents/hello-vscode.txt`, {
      data: { type: 'file', format: 'text', content: 'from the home' }
    });
    expect([200, 201]).toContain(put.status());
    await login(page, 'ui-student');
    await openNotebook(page, NOTEBOOK);
    const section = page.locator('.jp-Launcher-section', { hasText: 'Apps' });
    const [vscode] = await Promise.all([
      page.waitForEvent('popup'),
      section.locator('.jp-LauncherCard', { hasText: 'VS Code' }).click()
    ]);
    await expect(vscode.locator('.monaco-workbench')).toBeVisible({ timeout: 90_000 });
    // The home is VS Code's folder: the file is in its explorer.
    await vscode.locator('.explorer-folders-view .monaco-list-row', { hasText: 'hello-vscode.txt' }).dblclick();
    const editor = vscode.locator('.editor-instance .monaco-editor').first();
    await expect(editor).toContainText('from the home', { timeout: 30_000 });
    await editor.click();
    await vscode.keyboard.press('Control+End');
    await vscode.keyboard.type(', saved by VS Code');
    await vscode.keyboard.press('Control+S');
    await expect.poll(() => fileText('hello-vscode.txt'), { timeout: 30_000 }).toBe('from the home, saved by VS Code');
    await snapshot(vscode, testInfo, '100-vscode-saved');
  });
});
