import { expect, Page, test } from '@playwright/test';
import { apiToken, asToken, galataFromStart, labOf, login, openLab, snapshot } from './helpers';

/** An API client acting as the user logged in on `page` (a token made through the page). */
async function apiAs(page: Page, baseURL: string) {
  return asToken(baseURL, await apiToken(page));
}

const NOTEBOOK = {
  type: 'notebook',
  format: 'json',
  content: {
    cells: [{ cell_type: 'markdown', source: '# Homework 1\nTrain a small model.', metadata: {} }],
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' } },
    nbformat: 4,
    nbformat_minor: 5
  }
};

test('a teacher publishes a template, a student starts from it and submits, a TA opens the submission', async ({
  browser,
  baseURL
}, testInfo) => {
  test.setTimeout(300_000);
  // The course: the admin makes it, with the student, the TA and the teacher.
  const adminPage = await (await browser.newContext()).newPage();
  await login(adminPage, 'ui-admin');
  const admin = await apiAs(adminPage, baseURL!);
  expect((await admin.post('/api/groups', { data: { name: 'ui-course', display_name: 'UI Course' } })).status()).toBe(201);
  for (const [user, manager] of [['ui-pupil', false], ['ui-ta', true], ['ui-teacher', true]] as const) {
    expect((await admin.put(`/api/groups/ui-course/members/${user}`, { data: { manager } })).status()).toBe(200);
  }

  // The teacher prepares lab material in a notebook and publishes it from JupyterLab.
  const teacher = await (await browser.newContext()).newPage();
  await login(teacher, 'ui-teacher');
  const teacherApi = await apiAs(teacher, baseURL!);
  expect((await teacherApi.post('/api/notebooks', { data: { name: 'prep', cpu: 1, memory: '1Gi' } })).status()).toBe(201);
  galataFromStart('ui-teacher', 'prep');
  expect((await teacherApi.post('/api/notebooks/ui-teacher/prep/start?wait=true')).status()).toBe(202);
  expect((await teacherApi.put('/notebook/ui-teacher/prep/api/contents/hw1', { data: { type: 'directory' } })).status()).toBe(201);
  expect((await teacherApi.put('/notebook/ui-teacher/prep/api/contents/hw1/task.ipynb', { data: NOTEBOOK })).status()).toBe(201);
  const prep = await openLab(teacher, '/notebook/ui-teacher/prep', 'tree/hw1/task.ipynb');
  await expect(teacher.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
  expect(await prep.notebook.isOpen('task.ipynb')).toBe(true);
  await teacher.locator('[data-cgu="save-template-button"]').first().click();
  await expect(teacher.locator('[data-cgu="template-dialog"]')).toBeVisible();
  await teacher.locator('[data-cgu="template-display-name"]').fill('UI Lab');
  await expect(teacher.locator('[data-cgu="template-name"]')).toHaveValue('ui-lab');
  await teacher.locator('[data-cgu="template-version-label"]').fill('2027 spring');
  await teacher.locator('[data-cgu="template-visibility-group"]').check();
  await teacher.locator('[data-cgu="template-group"]').selectOption('ui-course');
  await teacher.locator('[data-cgu="picker-checkbox"][data-path="hw1"]').check();
  await expect(teacher.locator('[data-cgu="picker-total"]')).toContainText('1 file');
  await snapshot(teacher, testInfo, '20-save-as-template');
  await teacher.locator('[data-cgu="template-save"]').click();
  await expect(teacher.getByText(/Saved template "ui-lab" version 1/)).toBeVisible({ timeout: 60_000 });

  // The student starts from it in one click and finds the files.
  const student = await (await browser.newContext()).newPage();
  await login(student, 'ui-pupil');
  await student.getByRole('link', { name: 'Templates' }).click();
  const card = student.locator('[data-template="ui-lab"]');
  await expect(card).toContainText('UI Lab');
  await snapshot(student, testInfo, '21-template-gallery');
  // The notebook the click makes is named after the template.
  galataFromStart('ui-pupil', 'ui-lab');
  await card.getByRole('button', { name: /Start a notebook from UI Lab/ }).click();
  await student.waitForURL(/\/notebook\/ui-pupil\/ui-lab\/lab/, { timeout: 120_000 });
  const started = await labOf(student, '/notebook/ui-pupil/ui-lab');
  await expect.poll(() => started.filebrowser.isFileListedInBrowser('hw1'), { timeout: 60_000 }).toBe(true);

  // The teacher sets an assignment; the student submits from JupyterLab and gets a receipt.
  const deadline = new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString();
  const assignment = await (await teacherApi.post('/api/groups/ui-course/assignments', {
    data: { name: 'hw1', title: 'Homework 1', deadline, allow_late: false }
  })).json();
  const lab = await openLab(student, '/notebook/ui-pupil/ui-lab', 'tree/hw1/task.ipynb');
  await expect(student.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
  expect(await lab.notebook.isOpen('task.ipynb')).toBe(true);
  await student.locator('[data-cgu="submit-button"]').first().click();
  await expect(student.locator('[data-cgu="submit-dialog"]')).toBeVisible();
  await student.locator(`[data-cgu="submit-assignment"][data-assignment-id="${assignment.id}"] [data-cgu="submit-assignment-radio"]`).check();
  await student.locator('[data-cgu="submit-note"]').fill('My first try');
  await snapshot(student, testInfo, '22-submit-dialog');
  await student.locator('[data-cgu="submit-send"]').click();
  await expect(student.locator('[data-cgu="submit-receipt"]')).toBeVisible({ timeout: 60_000 });
  await expect(student.locator('[data-cgu="receipt-number"]')).toContainText('1');
  await snapshot(student, testInfo, '23-submission-receipt');

  // The TA opens the submission as a runnable notebook of their own.
  const ta = await (await browser.newContext()).newPage();
  await login(ta, 'ui-ta');
  await ta.goto(`/assignments/${assignment.id}`);
  await expect(ta.locator('#submissions tr[data-submission]')).toHaveCount(1);
  await snapshot(ta, testInfo, '24-ta-submissions');
  // The notebook the click makes: the assignment, the student and the submission's number.
  galataFromStart('ui-ta', 'hw1-ui-pupil-1');
  await ta.getByRole('button', { name: 'Open as notebook' }).click();
  await ta.waitForURL(/\/notebook\/ui-ta\/hw1-ui-pupil-1\/lab/, { timeout: 120_000 });
  const copy = await labOf(ta, '/notebook/ui-ta/hw1-ui-pupil-1');
  await expect.poll(() => copy.filebrowser.isFileListedInBrowser('hw1'), { timeout: 60_000 }).toBe(true);
  await snapshot(ta, testInfo, '25-ta-opened-submission');
  await admin.dispose();
  await teacherApi.dispose();
});
