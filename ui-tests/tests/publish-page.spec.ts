import { APIRequestContext, expect, test } from '@playwright/test';
import {
  apiToken,
  asToken,
  login,
  notebookJson,
  PASSWORD,
  openNotebook,
  snapshot,
  startNotebook
} from './helpers';

/**
 * Publishing a notebook as a page from JupyterLab, in Chromium: the teacher opens a lesson
 * in their notebook, runs "Publish as a Demo…" from the command palette and publishes the
 * open notebook as a page (Voilà) to their course; a student of the course reads the
 * rendered page; the teacher's notebook is stopped and started again, and the student's
 * page answers again with nobody having run anything.
 */
const OWNER = 'ui-teacher';
const NAME = 'pages';
const NOTEBOOK = `/notebook/${OWNER}/${NAME}`;
const COURSE = 'ui-pages';
const PAGE = `${NOTEBOOK}/voila-lesson/`;
// A student account of this spec's own: one in several courses changes other specs' forms.
const STUDENT = 'ui-pages-student';

test.use({ actionTimeout: 60_000 });

test.describe.serial('a notebook published as a page from the lab', () => {
  let admin: APIRequestContext;
  let teacherApi: APIRequestContext;

  test.beforeAll(async ({ browser }) => {
    const page = await (await browser.newContext()).newPage();
    await login(page, 'ui-admin');
    admin = await asToken(new URL(page.url()).origin, await apiToken(page));
    const student = await admin.post('/api/users', {
      data: { name: STUDENT, role: 'student', password: PASSWORD }
    });
    expect(student.status()).toBe(201);
    expect(
      (await admin.post('/api/groups', { data: { name: COURSE } })).status()
    ).toBe(201);
    for (const [user, manager] of [
      [STUDENT, false],
      [OWNER, true]
    ] as const) {
      const member = await admin.put(`/api/groups/${COURSE}/members/${user}`, {
        data: { manager }
      });
      expect(member.status()).toBe(200);
    }
    await page.close();
  });

  test.afterAll(async () => {
    await teacherApi?.post(`/api/notebooks/${OWNER}/${NAME}/stop?wait=true`);
    await teacherApi?.dispose();
    await admin?.dispose();
  });

  test('the teacher publishes the open notebook from the palette; a student reads it, again after a restart', async ({
    browser,
    baseURL
  }, testInfo) => {
    test.setTimeout(420_000);
    const teacher = await (await browser.newContext()).newPage();
    await login(teacher, OWNER);
    teacherApi = await asToken(baseURL!, await apiToken(teacher));
    await startNotebook(teacherApi, OWNER, NAME);
    const saved = await teacherApi.put(
      `${NOTEBOOK}/api/contents/lesson.ipynb`,
      { data: notebookJson(["print('rendered by voila:', 6 * 7)"]) }
    );
    expect([200, 201]).toContain(saved.status());

    await openNotebook(teacher, NOTEBOOK, 'lab/tree/lesson.ipynb');
    await expect(teacher.locator('.jp-NotebookPanel')).toBeVisible({
      timeout: 60_000
    });
    // The palette's shortcut works once JupyterLab has bound its keys: pressed until it opens.
    const palette = teacher.locator('#command-palette');
    const search = palette.locator('input');
    await expect(async () => {
      if (!(await search.isVisible())) {
        await teacher.keyboard.press('Control+Shift+C');
      }
      await expect(search).toBeVisible({ timeout: 2_000 });
    }).toPass({ timeout: 60_000 });
    await search.fill('Publish as a Demo');
    await palette
      .locator('.lm-CommandPalette-item', { hasText: 'Publish as a Demo' })
      .click();
    const dialog = teacher.locator('.cgu-PublishDialog');
    await expect(dialog).toBeVisible();
    await expect(dialog.locator('[data-cgu="publish-voila"]')).toBeChecked();
    await expect(dialog.locator('[data-cgu="publish-notebook"]')).toHaveValue(
      'lesson.ipynb'
    );
    await dialog.locator('[data-cgu="publish-course"]').selectOption(COURSE);
    await dialog.locator('[data-cgu="publish-title"]').fill('Lesson page');
    await snapshot(
      teacher,
      testInfo,
      '300-teacher-publishes-a-page-from-the-lab'
    );
    await dialog.locator('[data-cgu="publish-send"]').click();
    await expect(dialog).toHaveCount(0, { timeout: 60_000 });
    await expect(
      teacher.getByText(`"Lesson page" is published to ${COURSE}.`)
    ).toBeVisible();
    await snapshot(teacher, testInfo, '301-the-page-is-published');

    const student = await (await browser.newContext()).newPage();
    await login(student, STUDENT);
    await student.goto(PAGE);
    await expect(student.getByText('rendered by voila: 42')).toBeVisible({
      timeout: 90_000
    });
    await snapshot(student, testInfo, '302-student-reads-the-page');

    expect(
      (
        await teacherApi.post(`/api/notebooks/${OWNER}/${NAME}/stop?wait=true`)
      ).status()
    ).toBe(202);
    expect(
      (
        await teacherApi.post(`/api/notebooks/${OWNER}/${NAME}/start?wait=true`)
      ).status()
    ).toBe(202);
    await student.goto(PAGE);
    await expect(student.getByText('rendered by voila: 42')).toBeVisible({
      timeout: 90_000
    });
    await snapshot(student, testInfo, '303-the-page-after-a-restart');
    await student.close();
    await teacher.close();
  });
});
