/**
 * The whole teaching day, walked in Chromium by every role, through the pages and
 * JupyterLab as people would (the API only where a person would have a second tab).
 * Each step's time goes to artifacts/day-walk-times.json and a screenshot per step.
 * Issue 23's fixes are walked where they fall: the teacher creates the TA, a share given
 * again replaces the first, the TA's Open as notebook (progress at once, one copy), the
 * admin's Open as me, and the pages' dates and sizes.
 *
 * JupyterLab itself is driven through galata's helpers (helpers.ts: openLab, labOf); the
 * portal's pages and the platform's own dialogs stay plain Playwright. Each notebook the
 * walk opens in JupyterLab is made drivable by its owner first (helpers.ts: loadGalata),
 * outside the step's time: the teacher's, the student's and the TA's copy.
 */
import { IJupyterLabPageFixture } from '@jupyterlab/galata';
import { expect, Page, test, TestInfo } from '@playwright/test';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { apiToken, asToken, labOf, loadGalata, login, openLab, snapshot } from './helpers';

const COURSE = 'day-course';
const STUDENTS = ['day-s1', 'day-s2', 'day-s3', 'day-s4', 'day-s5'];
const TEMPLATE = 'day-lab';
const TIMES = path.resolve(__dirname, '../../artifacts/day-walk-times.json');
/** Every date on the pages in one shape, local time (issue 23 item 10). */
const MOMENT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/;

const MALFORMED = [
  'username,display_name,email',
  'day-s1,Ada Lovelace,ada@uni.example.edu',
  'day-s2,"Alan Turing,alan@uni.example.edu',
  'day-s3,Grace Hopper,grace@uni.example.edu'
].join('\n');

const CLASS_LIST = [
  'username,display_name,email',
  'day-s1,Ada Lovelace,ada@uni.example.edu',
  'day-s2,Alan Turing,alan@uni.example.edu',
  'day-s3,Grace Hopper,grace@uni.example.edu',
  'day-s4,Edsger Dijkstra,edsger@uni.example.edu',
  'day-s5,Barbara Liskov,barbara@uni.example.edu'
].join('\n');

const IRIS = ['sepal_length,sepal_width,species', '5.1,3.5,setosa', '7.0,3.2,versicolor', '6.3,3.3,virginica'].join('\n');

/** The lab's notebook: it reads a data file of the home, as students' work does. */
const ANALYSIS = {
  type: 'notebook',
  format: 'json',
  content: {
    cells: [
      {
        cell_type: 'code',
        source: "import pandas as pd\ndf = pd.read_csv('data/iris.csv')\nprint('rows:', len(df), 'species:', df.species.nunique())",
        metadata: {},
        outputs: [],
        execution_count: null
      }
    ],
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' } },
    nbformat: 4,
    nbformat_minor: 5
  }
};

// A step that cannot happen fails within a minute, with its screenshot, instead of hanging.
test.use({ actionTimeout: 60_000 });

/** Each step's wall time, for the closing note. */
const times: { step: string; seconds: number }[] = [];
/** How long the test's own set-up took so far (setUpGalata), left out of the steps' times. */
let setUpMs = 0;

async function step<T>(name: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const before = setUpMs;
  const result = await test.step(name, work);
  const spent = Date.now() - started - (setUpMs - before);
  times.push({ step: name, seconds: Math.round(spent / 100) / 10 });
  fs.mkdirSync(path.dirname(TIMES), { recursive: true });
  fs.writeFileSync(TIMES, JSON.stringify(times, null, 2));
  return result;
}

/**
 * Galata's helpers loaded into `owner`'s notebook `name` (a restart: helpers.ts,
 * loadGalata), by `page`, logged in as the owner. What the test needs, not what a person
 * does: its time is not the step's.
 */
async function setUpGalata(page: Page, owner: string, name: string): Promise<void> {
  const started = Date.now();
  try {
    await test.step(`test set-up: galata's helpers in ${owner}/${name}`, () => loadGalata(page, owner, name));
  } finally {
    setUpMs += Date.now() - started;
  }
}

async function newPage(page: Page): Promise<Page> {
  return (await page.context().browser()!.newContext()).newPage();
}

/** A first log-in with a one-time password: the person chooses their own at once. */
async function firstLogin(page: Page, name: string, oneTime: string): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('User name').fill(name);
  await page.getByLabel('Password').fill(oneTime);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('heading', { name: 'My account' })).toBeVisible();
  await page.getByLabel('Current password').fill(oneTime);
  await page.getByLabel('New password', { exact: true }).fill(`${name}-own-password`);
  await page.getByLabel('Repeat new password').fill(`${name}-own-password`);
  await page.getByRole('button', { name: 'Change password' }).click();
  await expect(page.getByRole('heading', { name: 'My account' })).toBeHidden();
}

/** The admin adds an account on the Users page and reads its one-time password there. */
async function addAccount(admin: Page, name: string, full: string, role: string): Promise<string> {
  await admin.getByLabel('User name').fill(name);
  await admin.getByLabel('Full name').fill(full);
  await admin.locator('#u-role').selectOption(role);
  await admin.getByRole('button', { name: 'Add account' }).click();
  const created = admin.locator('#user-created');
  await expect(created).toContainText(`Account ${name} created`);
  return (await created.locator('code').textContent())!.trim();
}

/** Run the open notebook's first cell in JupyterLab and return its output text. */
async function runFirstCell(lab: IJupyterLabPageFixture): Promise<string> {
  // The kernel must be connected first: a cell run while it connects is dropped.
  await expect(lab.locator('#jp-main-statusbar').getByText(/\| Idle/)).toBeVisible({ timeout: 90_000 });
  // Shift+Enter on the cell, as a person runs it; the output is waited for below, with a
  // limit (galata's own wait for the run has none).
  expect(await lab.notebook.runCell(0, { wait: false })).toBe(true);
  const output = (await lab.notebook.getCellLocator(0))!.locator('.jp-OutputArea-output');
  await expect(output).toBeVisible({ timeout: 90_000 });
  return ((await lab.notebook.getCellTextOutput(0)) ?? []).join('').trim();
}

test('the whole teaching day, by every role', async ({ page, baseURL }, testInfo: TestInfo) => {
  test.setTimeout(30 * 60_000);
  const shot = (p: Page, name: string) => snapshot(p, testInfo, `day-${name}`);

  // -- the admin: the teacher's account, then the Data science environment --
  await login(page, 'ui-admin');
  const accounts = await step('admin creates the teacher', async () => {
    await page.goto('/admin/users');
    const teacher = await addAccount(page, 'day-teacher', 'Dana Teacher', 'teacher');
    await shot(page, '01-admin-accounts');
    return { teacher };
  });

  await step('admin builds the Data science environment', async () => {
    await page.goto('/admin/system');
    await page.getByLabel('Recipe').selectOption('data-science');
    await page.locator('#b-name').fill('data-science');
    await page.getByRole('button', { name: 'Build', exact: true }).click();
    await expect(page.locator('#build-box')).toBeVisible();
    await shot(page, '02-environment-building');
    const row = page.locator('#environments tr').filter({ hasText: 'data-science' });
    await expect(row).toContainText('ready', { timeout: 15 * 60_000 });
    await expect(row).toContainText('pandas');
    await shot(page, '03-environment-ready');
  });

  // -- the teacher: the course, the class list, the TA --
  const teacher = await newPage(page);
  const passwords = await step('teacher creates the course and imports the class', async () => {
    await firstLogin(teacher, 'day-teacher', accounts.teacher);
    await teacher.goto('/courses');
    await teacher.getByLabel('Name', { exact: true }).fill(COURSE);
    await teacher.getByLabel('Display name').fill('Data Science 101');
    await teacher.getByRole('button', { name: 'Create course' }).click();
    await teacher.waitForURL(new RegExp(`/courses/${COURSE}`));
    const members = teacher.locator('#panel-members');
    await members.getByLabel('or paste it').fill(MALFORMED);
    await members.getByRole('button', { name: 'Import' }).click();
    await expect(teacher.locator('#import-errors')).toContainText('Nothing was imported');
    await expect(teacher.locator('#import-error-lines li').first()).toContainText('Line 3:');
    await expect(teacher.locator('#members tr[data-member="day-s1"]')).toHaveCount(0);
    await shot(teacher, '04-class-list-refused');
    await members.getByLabel('or paste it').fill(CLASS_LIST);
    await members.getByRole('button', { name: 'Import' }).click();
    await expect(teacher.locator('#import-summary')).toContainText('5 account(s) created');
    const [download] = await Promise.all([
      teacher.waitForEvent('download'),
      teacher.getByRole('button', { name: 'Download passwords (CSV)' }).click()
    ]);
    const rows = fs.readFileSync((await download.path())!, 'utf-8').trim().split(/\r?\n/).slice(1);
    await shot(teacher, '05-class-imported');
    return Object.fromEntries(rows.map(line => line.split(','))) as Record<string, string>;
  });
  expect(Object.keys(passwords).sort()).toEqual(STUDENTS);

  // The TA in one step from the course page (issue 23 item 6): the account, its one-time
  // password shown once, a TA of the course at once; they log in and see the course.
  const ta = await newPage(page);
  await step('teacher creates the TA on the course page; the TA logs in', async () => {
    await teacher.getByRole('tab', { name: 'TAs', exact: true }).click();
    const panel = teacher.locator('#panel-tas');
    await panel.getByLabel('New TA').fill('day-ta');
    await panel.getByLabel('Full name').fill('Tom Assistant');
    await panel.getByRole('button', { name: 'Create TA' }).click();
    const created = teacher.locator('#new-ta-info');
    await expect(created).toContainText(`day-ta was created and is now a TA of ${COURSE}`);
    const oneTime = (await created.locator('#new-ta-password').textContent())!.trim();
    expect(oneTime).not.toBe('');
    await expect(teacher.locator('#tas tr[data-ta="day-ta"]')).toContainText('TA');
    await expect(teacher.locator('#tas tr[data-ta="day-ta"]')).not.toContainText('invited');
    await shot(teacher, '06-course-ta');
    await firstLogin(ta, 'day-ta', oneTime);
    await ta.goto('/courses');
    await expect(ta.locator(`[data-course="${COURSE}"]`).getByRole('link', { name: 'Data Science 101' })).toBeVisible();
    await shot(ta, '06b-ta-sees-course');
  });

  // -- the teacher prepares the lab in a Data science notebook and publishes it --
  const teacherApi = await asToken(baseURL!, await apiToken(teacher));
  await step('teacher publishes a template with its data file', async () => {
    await teacher.goto('/notebooks/new');
    await teacher.getByLabel('Name', { exact: true }).fill('prep');
    await teacher.getByLabel('Environment').selectOption('data-science');
    await expect(teacher.locator('#nb-environment-packages')).toContainText('pandas');
    await shot(teacher, '07-new-notebook-form');
    await teacher.getByRole('button', { name: 'Create and start' }).click();
    await teacher.waitForURL(/\/notebook\/day-teacher\/prep\/lab/, { timeout: 180_000 });
    await setUpGalata(teacher, 'day-teacher', 'prep');
    for (const [where, body] of [
      ['week1', { type: 'directory' }],
      ['week1/data', { type: 'directory' }],
      ['week1/data/iris.csv', { type: 'file', format: 'text', content: IRIS }],
      ['week1/analysis.ipynb', ANALYSIS]
    ] as const) {
      const put = await teacherApi.put(`/notebook/day-teacher/prep/api/contents/${where}`, { data: body });
      expect(put.status(), where).toBe(201);
    }
    const lab = await openLab(teacher, '/notebook/day-teacher/prep', 'tree/week1/analysis.ipynb');
    await expect(teacher.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    expect(await lab.notebook.isOpen('analysis.ipynb')).toBe(true);
    await teacher.locator('[data-cgu="save-template-button"]').first().click();
    await teacher.locator('[data-cgu="template-display-name"]').fill('Day lab');
    await expect(teacher.locator('[data-cgu="template-name"]')).toHaveValue(TEMPLATE);
    await teacher.locator('[data-cgu="template-visibility-group"]').check();
    await teacher.locator('[data-cgu="template-group"]').selectOption(COURSE);
    await teacher.locator('[data-cgu="picker-checkbox"][data-path="week1"]').check();
    await shot(teacher, '08-save-as-template');
    await teacher.locator('[data-cgu="template-save"]').click();
    await expect(teacher.getByText(/Saved template "day-lab" version 1/)).toBeVisible({ timeout: 60_000 });
  });

  const assignment = await step('teacher deploys lab files and sets an assignment', async () => {
    await teacher.goto(`/courses/${COURSE}#files`);
    const files = teacher.locator('#panel-files');
    await files.getByLabel('From').selectOption('notebook:prep');
    await files.getByLabel('Title').fill('Week 1 reading');
    await files.getByLabel('Folder of that notebook').fill('week1/data');
    await files.getByLabel('To the folder').fill('week1-data');
    await files.getByRole('button', { name: 'Copy to every member' }).click();
    const deployed = teacher.locator('#deployments tr').filter({ hasText: 'Week 1 reading' });
    await expect(deployed).toContainText('done', { timeout: 60_000 });
    // Dates in one shape on every page (issue 23 item 10).
    await expect(deployed.locator('td').first()).toHaveText(MOMENT);
    await teacher.getByRole('tab', { name: 'Assignments' }).click();
    const form = teacher.locator('#panel-assignments');
    await form.getByLabel('Name').fill('hw1');
    await form.getByLabel('Title').fill('Homework 1: the iris data');
    await form.getByRole('button', { name: 'Create assignment' }).click();
    await expect(teacher.locator('#assignments tr').filter({ hasText: 'Homework 1' })).toBeVisible();
    await shot(teacher, '09-course-assignment');
    const list = await (await teacherApi.get(`/api/groups/${COURSE}/assignments`)).json();
    return list.find((a: { name: string }) => a.name === 'hw1') as { id: number };
  });

  // -- a student: first log-in, start from the template, run it --
  const student = await newPage(page);
  const NOTEBOOK = `/notebook/day-s1/${TEMPLATE}`;
  const studentLab = await step('student starts from the template and runs it (pandas)', async () => {
    await firstLogin(student, 'day-s1', passwords['day-s1']);
    await student.goto('/templates');
    const card = student.locator(`[data-template="${TEMPLATE}"]`);
    await card.getByRole('button', { name: /Start a notebook from Day lab/ }).click();
    await student.waitForURL(new RegExp(`${NOTEBOOK}/lab`), { timeout: 180_000 });
    await setUpGalata(student, 'day-s1', TEMPLATE);
    const lab = await openLab(student, NOTEBOOK, 'tree/week1/analysis.ipynb');
    await expect(student.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    expect(await lab.notebook.isOpen('analysis.ipynb')).toBe(true);
    expect(await runFirstCell(lab)).toContain('rows: 3 species: 3');
    await shot(student, '10-student-ran-template');
    return lab;
  });

  // -- sharing with the TA: read-only first, then editable --
  await step('student shares read-only, then editable, with the TA', async () => {
    await student.locator('[data-cgu="share-button"]').first().click();
    await student.locator('[data-cgu="share-scope-notebook"]').check();
    await student.locator('[data-cgu="share-search"]').fill('day-ta');
    await student.locator('[data-cgu="share-suggestion"][data-grantee="user:day-ta"]').click();
    await student.locator('[data-cgu="share-access-read"]').check();
    await student.locator('[data-cgu="share-submit"]').click();
    await expect(student.locator('[data-cgu="share-row"]')).toHaveCount(1);
    await shot(student, '11-share-read-only');
    await student.locator('.cgu-ShareDialog .jp-Dialog-footer button', { hasText: 'Close' }).click();

    const taLab = await openLab(ta, NOTEBOOK, 'tree/week1/analysis.ipynb');
    await expect(ta.locator('[data-cgu="access-status"]')).toHaveText('Read-only', { timeout: 60_000 });
    await expect(ta.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    expect(await taLab.notebook.isOpen('analysis.ipynb')).toBe(true);
    await shot(ta, '12-ta-reads');

    await student.locator('[data-cgu="share-button"]').first().click();
    await student.locator('[data-cgu="share-scope-notebook"]').check();
    await student.locator('[data-cgu="share-search"]').fill('day-ta');
    await student.locator('[data-cgu="share-suggestion"][data-grantee="user:day-ta"]').click();
    await student.locator('[data-cgu="share-access-edit"]').check();
    await student.locator('[data-cgu="share-submit"]').click();
    // A new grant to the same person and scope replaces the old one (issue 23 item 5).
    const rows = student.locator('[data-cgu="share-row"]');
    await expect(rows.locator('.cgu-Badge-edit')).toBeVisible();
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toHaveAttribute('data-grantee', 'user:day-ta');
    await shot(student, '12b-share-replaced');
    await student.locator('.cgu-ShareDialog .jp-Dialog-footer button', { hasText: 'Close' }).click();

    await taLab.reload();
    await expect(ta.locator('[data-cgu="access-status"]')).toHaveText('Shared: can edit', { timeout: 60_000 });
    await expect(ta.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    expect(await runFirstCell(taLab)).toContain('rows: 3');
    await shot(ta, '13-ta-edits');
  });

  // -- the student submits with the data; the TA runs the submission --
  await step('student submits the notebook with its data', async () => {
    expect(await studentLab.notebook.isActive('analysis.ipynb')).toBe(true);
    await student.locator('[data-cgu="submit-button"]').first().click();
    await expect(student.locator('[data-cgu="submit-dialog"]')).toBeVisible();
    await student
      .locator(`[data-cgu="submit-assignment"][data-assignment-id="${assignment.id}"] [data-cgu="submit-assignment-radio"]`)
      .check();
    await expect(student.locator('[data-cgu="picker-checkbox"][data-path="week1/data/iris.csv"]')).toBeChecked();
    await shot(student, '14-submit-with-data');
    await student.locator('[data-cgu="submit-send"]').click();
    await expect(student.locator('[data-cgu="submit-receipt"]')).toBeVisible({ timeout: 60_000 });
    await shot(student, '15-submission-receipt');
  });

  const COPY = '/notebook/day-ta/hw1-day-s1-1';
  await step('the TA opens the submission and runs it', async () => {
    await ta.goto(`/assignments/${assignment.id}`);
    const submission = ta.locator('#submissions tr[data-submission]');
    await expect(submission).toHaveCount(1);
    // Its date and size as every page writes them (issue 23 item 10).
    await expect(submission.locator('td').nth(1)).toHaveText(MOMENT);
    await expect(submission.locator('td').nth(2)).toHaveText(/^\d+ \((\d+ B|\d+\.\d [KM]iB)\)$/);
    // The copy's start page follows the start's progress stream, held here until the
    // page is on the screenshot.
    let asked: () => void = () => undefined;
    const held = new Promise<void>(resolve => (asked = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>(resolve => (release = resolve));
    const progress = (url: URL) => url.pathname === '/api/notebooks/day-ta/hw1-day-s1-1/events';
    await ta.route(progress, async route => {
      asked();
      await released;
      await route.fallback();
    });
    const clicked = Date.now();
    await ta.getByRole('button', { name: 'Open as notebook' }).click();
    // Progress at once (issue 23 item 2): the page says so, then the start page follows it.
    await expect(
      ta.getByText("Opening your copy of day-s1's submission #1").or(ta.locator('#progress-box'))
    ).toBeVisible({ timeout: 5_000 });
    times.push({ step: 'Open as notebook → progress shown', seconds: Math.round((Date.now() - clicked) / 100) / 10 });
    await ta.waitForURL(/\/notebook\/auto-start\/day-ta\/hw1-day-s1-1/, { timeout: 30_000, waitUntil: 'domcontentloaded' });
    await held;
    await expect(ta.locator('#progress-box')).toBeVisible();
    await expect(ta.locator('#start-button')).toBeHidden();
    await shot(ta, '16a-open-submission-progress');
    release();
    await ta.waitForURL(new RegExp(`${COPY}/lab`), { timeout: 180_000 });
    await ta.unroute(progress);
    await setUpGalata(ta, 'day-ta', 'hw1-day-s1-1');
    const lab = await openLab(ta, COPY, 'tree/week1/analysis.ipynb');
    await expect(ta.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    expect(await lab.notebook.isOpen('analysis.ipynb')).toBe(true);
    expect(await runFirstCell(lab)).toContain('rows: 3 species: 3');
    await shot(ta, '16-ta-ran-submission');
  });

  // One submission, one copy: a second click opens the same one (issue 23 item 2).
  await step("the TA's second Open as notebook opens the same copy", async () => {
    await ta.goto(`/assignments/${assignment.id}`);
    await ta.getByRole('button', { name: 'Open as notebook' }).click();
    await ta.waitForURL(new RegExp(`${COPY}/lab`), { timeout: 60_000 });
    await ta.goto('/notebooks');
    await expect(ta.locator('tr[data-notebook="day-ta/hw1-day-s1-1"]')).toBeVisible();
    await expect(ta.locator('tr[data-notebook^="day-ta/hw1-day-s1"]')).toHaveCount(1);
    await shot(ta, '16b-ta-one-copy');
  });

  // -- the student's notebook dies: they see it within seconds and restart it --
  await step('a killed notebook is seen stopped and restarted', async () => {
    const lab = await openLab(student, NOTEBOOK, 'tree/week1/analysis.ipynb');
    await expect(student.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
    expect(await lab.notebook.isOpen('analysis.ipynb')).toBe(true);
    // The student is at work: the notebook loaded, its kernel connected.
    await expect(student.locator('#jp-main-statusbar').getByText(/\| Idle/)).toBeVisible({ timeout: 90_000 });
    const killed = Date.now();
    // No shell: its own command line would match the pattern and be killed too.
    execFileSync('pkill', ['-KILL', '-f', '--', `--ServerApp.base_url=${NOTEBOOK}/`]);
    // JupyterLab's own dialogs for requests caught in the seconds before the platform
    // noticed ("Cannot open: … is not answering") queue before ours: close them.
    const dialog = student.getByRole('dialog').filter({ hasText: 'Your notebook stopped' });
    const other = student.locator('.jp-Dialog').filter({ hasNotText: 'Your notebook stopped' });
    await expect(async () => {
      if (await other.count()) {
        await other.first().getByRole('button', { name: 'Close' }).click({ timeout: 2000 });
      }
      await expect(dialog).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 20_000 });
    times.push({ step: 'kill → the student sees it stopped', seconds: Math.round((Date.now() - killed) / 100) / 10 });
    await shot(student, '17-notebook-stopped');
    await dialog.getByRole('button', { name: 'Restart' }).click();
    await student.waitForURL(new RegExp(`${NOTEBOOK}/lab`), { timeout: 180_000 });
    // The restarted server read its galata settings again from the home: JupyterLab is drivable.
    await labOf(student, NOTEBOOK);
    await expect(student.locator('.jp-DirListing-item[title*="week1"]').first()).toBeVisible({ timeout: 60_000 });
    await shot(student, '18-notebook-restarted');
  });

  // -- the admin looks at the student's notebook as herself (issue 23 item 3) --
  await step("admin opens the student's notebook as herself", async () => {
    await page.goto('/admin/users/day-s1');
    await page.getByRole('button', { name: `Open ${TEMPLATE} as me` }).click();
    const dialog = page.locator('#open-dialog');
    await expect(dialog).toBeVisible();
    // Without a reason the dialog stays open and says why.
    await dialog.getByRole('button', { name: 'Give me access' }).click();
    await expect(dialog.locator('#open-error')).toContainText(`say why you open day-s1/${TEMPLATE}`);
    await expect(dialog).toBeVisible();
    await shot(page, '19-open-as-me-needs-reason');
    await dialog.getByLabel('Access').selectOption('read');
    await dialog.getByLabel('Reason').fill('help request in class');
    await dialog.getByRole('button', { name: 'Give me access' }).click();
    await page.waitForURL(new RegExp(`${NOTEBOOK}/lab`), { timeout: 60_000 });
    // The admin's page is drivable by galata too (the student's server loads its helpers).
    await labOf(page, NOTEBOOK);
    await expect(page.locator('body')).toHaveAttribute('data-cgu-access', 'read', { timeout: 60_000 });
    await expect(page.locator('[data-cgu="access-status"]')).toHaveText('Read-only');
    await expect(page.locator('.jp-DirListing-item[title*="week1"]').first()).toBeVisible({ timeout: 60_000 });
    await shot(page, '20-admin-opened-as-me');
  });
  await teacherApi.dispose();
});
