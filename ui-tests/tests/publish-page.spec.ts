import { APIRequestContext, expect, test } from '@playwright/test';
import {
  apiToken,
  asToken,
  login,
  notebookJson,
  PASSWORD,
  openLab,
  snapshot,
  startNotebook
} from './helpers';

/**
 * Publishing a notebook as a page from JupyterLab, in Chromium: the teacher opens a lesson
 * in their persistent notebook (the demo site that keeps running for the course), runs
 * "Publish as a Demo…" from the command palette and publishes the open notebook as a page
 * (Voilà) to their course; a student of the course reads the rendered page, and from that
 * page the notebook's files and kernels are refused to them; a student of another course
 * is refused the page itself; the teacher's notebook is stopped and started again, and the
 * student's page answers again with nobody having run anything.
 */
const OWNER = 'ui-teacher';
const NAME = 'pages';
const NOTEBOOK = `/notebook/${OWNER}/${NAME}`;
const COURSE = 'ui-pages';
const PAGE = `${NOTEBOOK}/voila-lesson/`;
// A student account of this spec's own: one in several courses changes other specs' forms.
const STUDENT = 'ui-pages-student';
// A student of another course, and that course: accounts of this spec's own too.
const OUTSIDER = 'ui-pages-outsider';
const OTHER = 'ui-pages-other';

test.use({ actionTimeout: 60_000 });

test.describe.serial('a notebook published as a page from the lab', () => {
  let admin: APIRequestContext;
  let teacherApi: APIRequestContext;

  test.beforeAll(async ({ browser }) => {
    const page = await (await browser.newContext()).newPage();
    await login(page, 'ui-admin');
    admin = await asToken(new URL(page.url()).origin, await apiToken(page));
    for (const name of [STUDENT, OUTSIDER]) {
      const made = await admin.post('/api/users', {
        data: { name, role: 'student', password: PASSWORD }
      });
      expect(made.status()).toBe(201);
    }
    for (const course of [COURSE, OTHER]) {
      expect(
        (await admin.post('/api/groups', { data: { name: course } })).status()
      ).toBe(201);
    }
    for (const [course, user, manager] of [
      [COURSE, STUDENT, false],
      [COURSE, OWNER, true],
      [OTHER, OUTSIDER, false]
    ] as const) {
      const member = await admin.put(`/api/groups/${course}/members/${user}`, {
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

  test("the teacher publishes the open notebook from the palette; a student reads it, not the notebook's files or kernels; another course's student is refused; again after a restart", async ({
    browser,
    baseURL
  }, testInfo) => {
    test.setTimeout(420_000);
    const teacher = await (await browser.newContext()).newPage();
    await login(teacher, OWNER);
    teacherApi = await asToken(baseURL!, await apiToken(teacher));
    await startNotebook(teacherApi, OWNER, NAME, { galata: true });
    const persistent = await admin.patch(`/api/notebooks/${OWNER}/${NAME}`, {
      data: { persistent: true }
    });
    expect(persistent.status()).toBe(200);
    expect((await persistent.json()).persistent).toBe(true);
    const saved = await teacherApi.put(
      `${NOTEBOOK}/api/contents/lesson.ipynb`,
      { data: notebookJson(["print('rendered by voila:', 6 * 7)"]) }
    );
    expect([200, 201]).toContain(saved.status());

    const lab = await openLab(teacher, NOTEBOOK, 'tree/lesson.ipynb');
    await expect(teacher.locator('.jp-NotebookPanel')).toBeVisible({
      timeout: 60_000
    });
    expect(await lab.notebook.isOpen('lesson.ipynb')).toBe(true);
    // JupyterLab has bound its keys (openLab waits for its start), and the palette closes
    // when something else takes the focus (the notebook does once it has loaded, later on a
    // loaded host): opened, searched and chosen again until the choice is made.
    const palette = teacher.locator('#command-palette');
    const search = palette.locator('input');
    const choice = palette.locator('.lm-CommandPalette-item', {
      hasText: 'Publish as a Demo'
    });
    await expect(async () => {
      if (!(await search.isVisible())) {
        await teacher.keyboard.press('Control+Shift+C');
      }
      await search.fill('Publish as a Demo', { timeout: 2_000 });
      await choice.click({ timeout: 2_000 });
    }).toPass({ timeout: 60_000 });
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
    // The page is all the student may use there: from it (the notebook's own origin), the
    // notebook's files, its kernels and a new kernel are refused.
    const asked = await student.evaluate(async base => {
      const xsrf = document.cookie.match(/_xsrf=([^;]+)/)?.[1] ?? '';
      const post = {
        method: 'POST',
        headers: { 'X-XSRFToken': xsrf },
        body: '{}'
      };
      return [
        (await fetch(`${base}/api/contents/lesson.ipynb`)).status,
        (await fetch(`${base}/api/kernels`)).status,
        (await fetch(`${base}/api/kernels`, post)).status
      ];
    }, NOTEBOOK);
    expect(asked).toEqual([403, 403, 403]);
    const files = await student.goto(`${NOTEBOOK}/lab/tree/lesson.ipynb`);
    expect(files?.status()).toBe(403);
    await expect(student.getByText(/published demo only/)).toBeVisible();
    await snapshot(
      student,
      testInfo,
      '304-the-notebook-itself-refused-to-the-student'
    );

    const outsider = await (await browser.newContext()).newPage();
    await login(outsider, OUTSIDER);
    const refused = await outsider.goto(PAGE);
    expect(refused?.status()).toBe(404);
    await expect(outsider.getByText('rendered by voila: 42')).toHaveCount(0);
    await snapshot(outsider, testInfo, '305-another-course-refused-the-page');
    await outsider.close();

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
