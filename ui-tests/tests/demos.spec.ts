import {
  APIRequestContext,
  expect,
  Locator,
  Page,
  test
} from '@playwright/test';
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
 * A teacher's demo site, in Chromium: the teacher's persistent notebook serves a small web
 * app (Python's http.server, started from a cell), and the teacher publishes it to their
 * course with My notebooks' Publish button; a student of the course opens it from the
 * course page and uses it (its page asks the app for an answer), a student of another course
 * is refused, and once the teacher unpublishes it the student's next request is refused too.
 */
const OWNER = 'ui-teacher';
const NAME = 'demo-site';
const NOTEBOOK = `/notebook/${OWNER}/${NAME}`;
const COURSE = 'ui-demos';
const OTHER = 'ui-demos-other';
// The student of the other course: an account of this spec's own. A shared one (ui-pupil)
// left in a second course sent help.spec's raised hand to this course's queue.
const OUTSIDER = 'ui-demos-outsider';

// The app: a page whose button fetches a file of the app (a request of the app's own, under
// its path), served on a free port of the notebook; the cell prints the port.
const SERVE = [
  [
    'import os, socket, subprocess, sys, time',
    "os.makedirs('site', exist_ok=True)",
    "open('site/answer.txt', 'w').write('42, from the demo')",
    "open('site/index.html', 'w').write('''<!doctype html><title>Quiz demo</title>",
    '<h1>The teacher demo page</h1><button id="ask">Ask the demo</button><p id="answer"></p>',
    '<script>document.getElementById("ask").onclick = async () => {',
    '  document.getElementById("answer").textContent = await (await fetch("answer.txt")).text(); };',
    "</script>''')",
    'with socket.socket() as s:',
    "    s.bind(('127.0.0.1', 0))",
    '    port = s.getsockname()[1]',
    "subprocess.Popen([sys.executable, '-m', 'http.server', str(port), '--bind', '127.0.0.1',",
    "                  '--directory', 'site'], start_new_session=True,",
    '                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)',
    'for _ in range(300):',
    '    try:',
    "        socket.create_connection(('127.0.0.1', port), timeout=1).close()",
    '        break',
    '    except OSError:',
    '        time.sleep(0.1)',
    "print(f'serving on port {port}')"
  ].join('\n')
];

test.use({ actionTimeout: 60_000 });

/** The row of the demo in the teacher's Publish dialog. */
function demoRow(page: Page, port: number): Locator {
  return page.locator(`#demos-list tr[data-demo="proxy/${port}/"]`);
}

test.describe.serial("a teacher's demo site", () => {
  let admin: APIRequestContext;
  let teacherApi: APIRequestContext;
  let port = 0;

  test.beforeAll(async ({ browser, baseURL }) => {
    const page = await (await browser.newContext()).newPage();
    await login(page, 'ui-admin');
    admin = await asToken(baseURL!, await apiToken(page));
    const outsider = await admin.post('/api/users', {
      data: { name: OUTSIDER, role: 'student', password: PASSWORD }
    });
    expect(outsider.status()).toBe(201);
    for (const [course, student] of [
      [COURSE, 'ui-student'],
      [OTHER, OUTSIDER]
    ]) {
      expect(
        (await admin.post('/api/groups', { data: { name: course } })).status()
      ).toBe(201);
      const member = await admin.put(
        `/api/groups/${course}/members/${student}`,
        { data: { manager: false } }
      );
      expect(member.status()).toBe(200);
    }
    const teacherIn = await admin.put(
      `/api/groups/${COURSE}/members/${OWNER}`,
      { data: { manager: true } }
    );
    expect(teacherIn.status()).toBe(200);
    await page.close();
  });

  test.afterAll(async () => {
    await teacherApi?.post(`/api/notebooks/${OWNER}/${NAME}/stop?wait=true`);
    await teacherApi?.dispose();
    await admin?.dispose();
  });

  test('the teacher serves an app from a persistent notebook and publishes it with the button', async ({
    browser,
    baseURL
  }, testInfo) => {
    test.setTimeout(300_000);
    const teacher = await (await browser.newContext()).newPage();
    await login(teacher, OWNER);
    teacherApi = await asToken(baseURL!, await apiToken(teacher));
    await startNotebook(teacherApi, OWNER, NAME);
    const persistent = await admin.patch(`/api/notebooks/${OWNER}/${NAME}`, {
      data: { persistent: true }
    });
    expect(persistent.status()).toBe(200);
    const saved = await teacherApi.put(`${NOTEBOOK}/api/contents/serve.ipynb`, {
      data: notebookJson(SERVE)
    });
    expect([200, 201]).toContain(saved.status());

    // The app runs from a cell of the notebook.
    await openNotebook(teacher, NOTEBOOK, 'lab/tree/serve.ipynb');
    await expect(teacher.locator('.jp-NotebookPanel')).toBeVisible({
      timeout: 60_000
    });
    await expect(
      teacher.locator('#jp-main-statusbar').getByText(/\| Idle/)
    ).toBeVisible({ timeout: 90_000 });
    const cell = teacher.locator('.jp-Notebook .jp-Cell').first();
    await cell.locator('.jp-InputPrompt').click();
    await teacher.keyboard.press('Shift+Enter');
    const output = cell.locator('.jp-OutputArea');
    await expect(output).toContainText('serving on port', { timeout: 90_000 });
    port = Number(
      (await output.innerText()).match(/serving on port (\d+)/)![1]
    );

    // My notebooks: Publish, the port, the course, a title.
    await teacher.goto('/notebooks');
    await teacher.locator(`[data-demos="${OWNER}/${NAME}"]`).click();
    const dialog = teacher.locator('#demos-dialog');
    await expect(dialog).toBeVisible();
    await expect(
      dialog.getByText('Nothing of this notebook is published.')
    ).toBeVisible();
    await dialog.getByLabel('App').selectOption('port');
    await dialog.getByLabel('Port').fill(String(port));
    await dialog.getByLabel('Audience').selectOption(COURSE);
    await dialog.getByLabel('Title').fill('Quiz demo');
    await snapshot(teacher, testInfo, '280-teacher-publishes');
    await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
    const row = demoRow(teacher, port);
    await expect(row).toBeVisible();
    await expect(row).toContainText('Quiz demo');
    await expect(row).toContainText(COURSE);
    await expect(row.locator('[data-demo-url]')).toContainText(
      `${NOTEBOOK}/proxy/${port}/`
    );
    await expect(row.locator('[data-visitors]')).toHaveText('0');
    await snapshot(teacher, testInfo, '281-teacher-sees-the-demo');
    await teacher.close();
  });

  test("a student of the course uses it from the course page; another course's student is refused", async ({
    browser
  }, testInfo) => {
    test.setTimeout(180_000);
    const student = await (await browser.newContext()).newPage();
    await login(student, 'ui-student');
    await student.goto(`/courses/${COURSE}`);
    const link = student
      .locator('#course-demos')
      .getByRole('link', { name: 'Quiz demo' });
    await expect(link).toBeVisible({ timeout: 30_000 });
    await snapshot(student, testInfo, '282-course-page-lists-the-demo');
    const [demo] = await Promise.all([
      student.waitForEvent('popup'),
      link.click()
    ]);
    await expect(
      demo.getByRole('heading', { name: 'The teacher demo page' })
    ).toBeVisible({ timeout: 60_000 });
    expect(demo.url()).toContain(`${NOTEBOOK}/proxy/${port}/`);
    await demo.getByRole('button', { name: 'Ask the demo' }).click();
    await expect(demo.locator('#answer')).toHaveText('42, from the demo');
    await snapshot(demo, testInfo, '283-student-uses-the-demo');
    // The demo is all the student may use there: the notebook's files are refused.
    const files = await demo.evaluate(
      async base => (await fetch(`${base}/api/contents`)).status,
      NOTEBOOK
    );
    expect(files).toBe(403);

    const pupil = await (await browser.newContext()).newPage();
    await login(pupil, OUTSIDER);
    const refused = await pupil.goto(demo.url());
    expect(refused?.status()).toBe(404);
    await expect(
      pupil
        .getByText(/no longer have access|not found|that you may open/i)
        .first()
    ).toBeVisible();
    await snapshot(pupil, testInfo, '284-other-course-refused');
    await pupil.close();
    await student.close();
  });

  test("the teacher sees the visitor and unpublishes; the student's next request is refused", async ({
    browser
  }, testInfo) => {
    test.setTimeout(180_000);
    const student = await (await browser.newContext()).newPage();
    await login(student, 'ui-student');
    await student.goto(`${NOTEBOOK}/proxy/${port}/`);
    await expect(
      student.getByRole('heading', { name: 'The teacher demo page' })
    ).toBeVisible({ timeout: 60_000 });

    const teacher = await (await browser.newContext()).newPage();
    await login(teacher, OWNER);
    await teacher.locator(`[data-demos="${OWNER}/${NAME}"]`).click();
    const row = demoRow(teacher, port);
    await expect(row.locator('[data-visitors]')).toHaveText('1');
    await snapshot(teacher, testInfo, '285-teacher-sees-a-visitor');
    await row.getByRole('button', { name: 'Unpublish' }).click();
    await expect(row).toHaveCount(0);
    await expect(
      teacher
        .locator('#demos-dialog')
        .getByText('Nothing of this notebook is published.')
    ).toBeVisible();
    await snapshot(teacher, testInfo, '286-teacher-unpublished');

    // The page the student still has open: its next request to the app is refused.
    const asked = await student.evaluate(
      async () => (await fetch('answer.txt')).status
    );
    expect(asked).toBe(404);
    const reloaded = await student.reload();
    expect(reloaded?.status()).toBe(404);
    await snapshot(student, testInfo, '287-student-refused-after-unpublish');
    await teacher.close();
    await student.close();
  });
});
