import { APIRequestContext, ConsoleMessage, expect, test } from '@playwright/test';
import { apiToken, asToken, login, snapshot, stopRunning } from './helpers';

/**
 * My notebooks → VS Code, in one tab: a stopped notebook starts (its progress shows) and the tab
 * lands on VS Code itself, not on JupyterLab with VS Code in a second tab; VS Code starts
 * without errors in its console (no missing `extensions.json`, every built-in extension
 * activates, git-base included).
 */
test.describe.serial('VS Code from My notebooks', () => {
  let api: APIRequestContext;

  test.beforeAll(async ({ browser, baseURL }) => {
    const owner = await (await browser.newContext()).newPage();
    await login(owner, 'ui-student');
    api = await asToken(baseURL!, await apiToken(owner));
    await owner.close();
    await stopRunning(api, 'ui-student');
    expect(
      (await api.post('/api/notebooks', { data: { name: 'code', cpu: 1, memory: '1Gi' } })).status()
    ).toBe(201);
  });

  test.afterAll(async () => {
    await api.post('/api/notebooks/ui-student/code/stop?wait=true');
    await api.dispose();
  });

  test('a stopped notebook starts and the same tab lands on VS Code, whose console is clean', async ({
    page,
    context
  }, testInfo) => {
    test.setTimeout(300_000);
    const messages: string[] = [];
    const record = (message: ConsoleMessage) => {
      if (message.type() === 'error' || message.type() === 'warning') {
        messages.push(`${message.type()}: ${message.text()}`);
      }
    };
    page.on('console', record);
    page.on('pageerror', error => messages.push(`pageerror: ${error.message}`));

    await login(page, 'ui-student');
    const row = page.locator('tr[data-notebook="ui-student/code"]');
    await expect(row).toContainText('stopped');
    const link = row.getByRole('link', { name: 'VS Code' });
    await expect(link).toBeVisible({ timeout: 30_000 });
    await snapshot(page, testInfo, '150-my-notebooks-vscode-link');
    await link.click();
    // The start page follows the start...
    await expect(page).toHaveURL(/\/notebook\/auto-start\/ui-student\/code/);
    await expect(page.locator('#progress-log li').first()).toBeVisible({ timeout: 60_000 });
    await snapshot(page, testInfo, '151-vscode-start-progress');
    // ...and goes on to VS Code itself, in this tab.
    await page.waitForURL(/\/notebook\/ui-student\/code\/vscode\//, { timeout: 180_000 });
    await expect(page.locator('.monaco-workbench')).toBeVisible({ timeout: 120_000 });
    expect(context.pages()).toHaveLength(1);
    expect(page.url()).not.toContain('/lab');
    // The built-in extensions activate in the seconds after the workbench shows.
    await page.waitForTimeout(15_000);
    await snapshot(page, testInfo, '152-vscode-one-tab');
    console.log(`VS Code console (errors and warnings):\n${messages.join('\n')}`);
    const bad = messages.filter(text => /extensions\.json|git-base|Activating extension .* failed/i.test(text));
    expect(bad).toEqual([]);

    // A running notebook: the same link opens VS Code at once (no start, no JupyterLab).
    await page.goto('/notebooks');
    await row.getByRole('link', { name: 'VS Code' }).click();
    await page.waitForURL(/\/notebook\/ui-student\/code\/vscode\//, { timeout: 60_000 });
    await expect(page.locator('.monaco-workbench')).toBeVisible({ timeout: 120_000 });
    expect(context.pages()).toHaveLength(1);
  });
});
