import { IJupyterLabPageFixture } from '@jupyterlab/galata';
import { expect, Locator, Page, test } from '@playwright/test';
import { apiToken, asToken, labOf, login, notebookJson, openLab, snapshot, startNotebook } from './helpers';

/**
 * Raise hand (issue 26), end to end: a student asks for help from JupyterLab; the TA
 * sees the request on the course page's Help tab and in JupyterLab's Help queue panel,
 * takes it there (the student's notebook opens live in a new tab), both type into one
 * cell and each sees the other's text live (two browser contexts, jupyter-collaboration
 * through the proxy), the student's status says who helps; Thanks ends it and the TA's
 * access with it. JupyterLab itself is driven through galata's helpers (helpers.ts: openLab).
 */
const STUDENT_NB = '/notebook/ui-pupil/help';
const TA_NB = '/notebook/ui-ta/desk';

async function apiAs(page: Page, baseURL: string) {
  return asToken(baseURL, await apiToken(page));
}

/** The first cell's editor of the notebook in front, once JupyterLab shows it. */
async function firstCell(lab: IJupyterLabPageFixture): Promise<Locator> {
  let cell: Locator | null = null;
  await expect.poll(async () => (cell = await lab.notebook.getCellInputLocator(0)) !== null, { timeout: 60_000 }).toBe(true);
  return cell!;
}

/** Type at the end of the first cell's text. */
async function typeAtEnd(lab: IJupyterLabPageFixture, text: string): Promise<void> {
  await (await firstCell(lab)).click();
  await lab.keyboard.press('Control+End');
  await lab.keyboard.type(text, { delay: 20 });
}

test('a student asks for help, a TA takes it, both edit one cell live, Thanks ends the TA access', async ({
  browser,
  baseURL
}, testInfo) => {
  test.setTimeout(420_000);
  const adminPage = await (await browser.newContext()).newPage();
  await login(adminPage, 'ui-admin');
  const admin = await apiAs(adminPage, baseURL!);
  expect((await admin.post('/api/groups', { data: { name: 'ui-help', display_name: 'UI Help' } })).status()).toBe(
    201
  );
  for (const [user, manager] of [
    ['ui-pupil', false],
    ['ui-ta', true]
  ] as const) {
    expect((await admin.put(`/api/groups/ui-help/members/${user}`, { data: { manager } })).status()).toBe(200);
  }

  // The student's notebook with one cell, open in JupyterLab.
  const student = await (await browser.newContext()).newPage();
  await login(student, 'ui-pupil');
  const studentApi = await apiAs(student, baseURL!);
  await startNotebook(studentApi, 'ui-pupil', 'help', { galata: true });
  expect(
    (await studentApi.put(`${STUDENT_NB}/api/contents/hw.ipynb`, { data: notebookJson(['loss = 1']) })).status()
  ).toBe(201);
  const studentLab = await openLab(student, STUDENT_NB, 'tree/hw.ipynb');
  await expect(student.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
  expect(await studentLab.notebook.isOpen('hw.ipynb')).toBe(true);

  // Ask for help: a question, the helper may edit.
  const ask = student.locator('[data-cgu="help-button"]').first();
  await expect(ask).toBeVisible({ timeout: 60_000 });
  await ask.click();
  const dialog = student.locator('.cgu-HelpDialog');
  await expect(dialog).toBeVisible();
  await dialog.locator('[data-cgu="help-question"]').fill('my loss is NaN');
  await dialog.locator('[data-cgu="help-access-edit"]').check();
  await snapshot(student, testInfo, '260-help-ask-dialog');
  await dialog.locator('[data-cgu="help-send"]').click();
  await expect(dialog).toBeHidden();
  const status = student.locator('[data-cgu="help-status-text"]');
  await expect(status).toHaveText('Help: waiting (position 1)');
  await snapshot(student, testInfo, '261-help-student-waiting');

  // The TA sees it on the course page's Help tab, with the figures.
  const ta = await (await browser.newContext()).newPage();
  await login(ta, 'ui-ta');
  const taApi = await apiAs(ta, baseURL!);
  await ta.goto('/courses/ui-help#help');
  const row = ta.locator('#help-requests tr[data-student="ui-pupil"]');
  await expect(row).toContainText('my loss is NaN');
  await expect(row).toContainText('waiting');
  await expect(ta.locator('#help-figures')).toContainText('Median wait');
  await snapshot(ta, testInfo, '262-help-course-page');

  // ... and in JupyterLab's Help queue panel, on the TA's own notebook.
  await startNotebook(taApi, 'ui-ta', 'desk', { galata: true });
  const taLab = await openLab(ta, TA_NB);
  await taLab.sidebar.openTab('cgu-lab-help-queue');
  const panel = ta.locator('[data-cgu="help-panel"]');
  await expect(panel).toBeVisible();
  const request = panel.locator('[data-cgu="help-request"][data-student="ui-pupil"]');
  await expect(request).toContainText('my loss is NaN');
  // One line of figures per course the TA helps in (other specs' courses too): this course's.
  await expect(panel.locator('[data-cgu="help-figures"]').filter({ hasText: '1 waiting' })).toHaveCount(1);
  await snapshot(ta, testInfo, '263-help-lab-panel');

  // Take: the student's notebook opens live in a new tab.
  const opened = ta.context().waitForEvent('page');
  await request.locator('[data-cgu="help-take"]').click();
  const helper = await opened;
  await helper.waitForURL(/\/notebook\/ui-pupil\/help\/lab/, { timeout: 60_000 });
  await expect(helper.locator('body')).toHaveAttribute('data-cgu-access', 'edit', { timeout: 90_000 });
  const helperLab = await labOf(helper, STUDENT_NB);
  await expect(status).toHaveText(/ui-ta is helping you/, { timeout: 30_000 });
  await expect(panel.locator('[data-cgu="help-request"][data-state="helping"]')).toBeVisible();
  // galata opens the file browser's entry (its File Browser Section), not the collaborators
  // panel's line for the file the student has open, which appears as soon as her awareness
  // reaches the TA's page.
  expect(await helperLab.filebrowser.open('hw.ipynb')).toBe(true);
  await expect(await firstCell(helperLab)).toContainText('loss = 1', { timeout: 60_000 });

  // Both type into the one cell; each sees the other's text live, without saving.
  await typeAtEnd(studentLab, '  # student was here');
  await expect(await firstCell(helperLab)).toContainText('# student was here', { timeout: 15_000 });
  await typeAtEnd(helperLab, '  # ta was here');
  await expect(await firstCell(studentLab)).toContainText('# ta was here', { timeout: 15_000 });
  await expect(await firstCell(studentLab)).toContainText('# student was here');
  // Who else is here: ours in the status bar, jupyter-collaboration's in its panel.
  await expect(student.locator('[data-cgu="collaboration-presence"]')).toContainText('ui-ta', {
    timeout: 30_000
  });
  await snapshot(student, testInfo, '264-help-student-sees-ta');
  await snapshot(helper, testInfo, '265-help-ta-in-student-notebook');

  // Thanks: the request ends, the TA's access with it.
  await student.locator('[data-cgu="help-thanks"]').click();
  await expect(status).toBeHidden({ timeout: 30_000 });
  const revoked = helper.locator('.cgu-RevokedDialog');
  const other = helper.locator('.jp-Dialog:not(.cgu-RevokedDialog)').filter({ hasText: 'no longer have access' });
  await expect
    .poll(
      async () => {
        if (await other.isVisible()) {
          await other.getByRole('button').last().click();
        }
        return revoked.isVisible();
      },
      { timeout: 60_000 }
    )
    .toBe(true);
  await snapshot(helper, testInfo, '266-help-ta-access-ended');
  expect(await (await studentApi.get('/api/notebooks/ui-pupil/help/shares')).json()).toEqual([]);
  await expect(panel.locator('[data-cgu="help-request"]')).toHaveCount(0, { timeout: 30_000 });
  const figures = await (await taApi.get('/api/groups/ui-help/help')).json();
  expect(figures.figures.helped).toBe(1);
  await ta.goto('/courses/ui-help#help');
  await expect(ta.locator('#help-requests')).toContainText('Nobody is waiting');
  await expect(ta.locator('#help-figures')).toContainText('Median help time');
  await snapshot(ta, testInfo, '267-help-course-page-after');
  for (const api of [admin, studentApi, taApi]) {
    await api.dispose();
  }
});
