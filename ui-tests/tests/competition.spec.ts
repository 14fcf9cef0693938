import { expect, Page, test } from '@playwright/test';
import { apiToken, asToken, login, notebookJson, snapshot, startNotebook } from './helpers';

const ROWS = 40;
const label = (i: number) => (i % 3 === 0 ? 'cat' : 'dog');
const csv = (rows: string[]) => ['id,prediction', ...rows].join('\n') + '\n';
const SOLUTION = csv(Array.from({ length: ROWS }, (_, i) => `${i + 1},${label(i + 1)}`));
// Right on every row but the first four.
const PREDICTIONS = csv(Array.from({ length: ROWS }, (_, i) => `${i + 1},${i < 4 ? 'bird' : label(i + 1)}`));

/** A datetime-local value (the browser's zone) `hours` from now. */
function localTime(hours: number): string {
  const when = new Date(Date.now() + hours * 3600_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}T${pad(when.getHours())}:${pad(when.getMinutes())}`;
}

async function uploadFile(page: Page, kind: string, name: string, text: string) {
  await page.getByLabel('Which file').selectOption(kind);
  await page.locator('#f-file').setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(text) });
  await page.locator('#file-form').getByRole('button', { name: 'Upload' }).click();
  await expect(page.locator('#status')).toContainText(`Uploaded ${name}`);
}

test('a teacher runs a course competition; a student submits from the page and sees the score', async ({
  browser,
  baseURL
}, testInfo) => {
  test.setTimeout(180_000);
  const admin = await (await browser.newContext()).newPage();
  await login(admin, 'ui-admin');
  const adminApi = await asToken(baseURL!, await apiToken(admin));
  expect((await adminApi.post('/api/groups', { data: { name: 'ui-comp', display_name: 'Competition course' } })).status()).toBe(201);
  expect((await adminApi.put('/api/groups/ui-comp/members/ui-teacher', { data: { manager: true } })).ok()).toBe(true);
  expect((await adminApi.put('/api/groups/ui-comp/members/ui-student', { data: { manager: false } })).ok()).toBe(true);

  // The teacher creates the competition from the Competitions page and uploads its files.
  const teacher = await (await browser.newContext()).newPage();
  await login(teacher, 'ui-teacher');
  await teacher.getByRole('link', { name: 'Competitions' }).click();
  const form = teacher.locator('#new-competition-form');
  await form.getByLabel('Course').selectOption('ui-comp');
  await form.getByLabel('Name').fill('pets');
  await form.getByLabel('Title').fill('Cats or dogs');
  await form.getByLabel('Description').fill('## The task\nLabel each photo **cat** or **dog**. <b>not bold</b>');
  await form.getByLabel('Start').fill(localTime(-1));
  await form.getByLabel('End').fill(localTime(24));
  await form.getByLabel('Metric').selectOption('accuracy');
  await snapshot(teacher, testInfo, '130-competition-new');
  await form.getByRole('button', { name: 'Create competition' }).click();
  await teacher.waitForURL(/\/competitions\/\d+$/);
  await expect(teacher.getByRole('heading', { level: 1 })).toHaveText('Cats or dogs');
  await expect(teacher.getByRole('heading', { name: 'The task' })).toBeVisible();
  await expect(teacher.locator('.markdown')).toContainText('<b>not bold</b>'); // HTML shown as text
  await uploadFile(teacher, 'train', 'train.csv', 'id,photo,label\n100,p100.png,cat\n');
  await uploadFile(teacher, 'test', 'test.csv', 'id,photo\n1,p1.png\n');
  await uploadFile(teacher, 'solution', 'solution.csv', SOLUTION);
  await expect(teacher.locator('#competition-files')).toContainText('Hidden solution (uploaded, never shown to students)');
  const url = teacher.url();

  // The student finds it, downloads the training set and submits predictions.
  const student = await (await browser.newContext()).newPage();
  await login(student, 'ui-student');
  await student.getByRole('link', { name: 'Competitions' }).click();
  await student.getByRole('link', { name: 'Cats or dogs' }).click();
  await expect(student.locator('#competition-files')).not.toContainText('solution');
  const [download] = await Promise.all([
    student.waitForEvent('download'),
    student.getByRole('link', { name: 'Training set' }).click()
  ]);
  expect(download.suggestedFilename()).toBe('pets-train.csv');
  await student.locator('#e-file').setInputFiles({ name: 'guess.csv', mimeType: 'text/csv', buffer: Buffer.from(PREDICTIONS) });
  await student.getByLabel('Note').fill('first try');
  await student.locator('#entry-form').getByRole('button', { name: 'Submit' }).click();
  const first = student.locator('#my-entries tr').first();
  await expect(first).toHaveAttribute('data-state', 'scored');
  await expect(student.locator('#leaderboard tr').first()).toContainText('ui-student');
  await expect(student.locator('#leaderboard tr').first()).toContainText('you');
  await snapshot(student, testInfo, '131-competition-student-scored');

  // A file with the wrong column gets a message about that file, and does not count.
  await student.locator('#e-file').setInputFiles({ name: 'oops.csv', mimeType: 'text/csv', buffer: Buffer.from('id,label\n1,cat\n') });
  await student.locator('#entry-form').getByRole('button', { name: 'Submit' }).click();
  await expect(student.locator('#my-entries tr').first()).toHaveAttribute('data-state', 'failed');
  await expect(student.locator('#my-entries tr').first()).toContainText('lacks the column prediction');
  // The private leaderboard waits for the end.
  await student.getByRole('button', { name: 'Private' }).click();
  await expect(student.locator('#board-hint')).toContainText('revealed when the competition ends');
  await snapshot(student, testInfo, '132-competition-student-refused-file');

  // ... and from JupyterLab: the notebook toolbar's Compete button sends a CSV of the home.
  const studentApi = await asToken(baseURL!, await apiToken(student));
  await startNotebook(studentApi, 'ui-student', 'compete');
  const contents = '/notebook/ui-student/compete/api/contents';
  expect((await studentApi.put(`${contents}/work.ipynb`, { data: notebookJson(['print(1)']) })).status()).toBe(201);
  const file = { type: 'file', format: 'text', content: PREDICTIONS };
  expect((await studentApi.put(`${contents}/preds.csv`, { data: file })).status()).toBe(201);
  await student.goto('/notebook/ui-student/compete/lab/tree/work.ipynb');
  await expect(student.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
  await student.locator('[data-cgu="competition-button"]').first().click();
  await expect(student.locator('[data-cgu="competition-select"]')).toContainText('Cats or dogs (ui-comp)');
  await student.locator('[data-cgu="competition-path"]').fill('preds.csv');
  await snapshot(student, testInfo, '133-competition-jupyterlab-dialog');
  await student.locator('[data-cgu="competition-submit"]').click();
  const result = student.locator('[data-cgu="competition-result"]');
  await expect(result).toHaveAttribute('data-state', 'scored', { timeout: 60_000 });
  await expect(result).toHaveText(/Entry \d+ scored \d\.\d{5} on the public leaderboard/);
  await snapshot(student, testInfo, '134-competition-jupyterlab-scored');

  // The teacher sees every entry, the private preview and can export them.
  await teacher.goto(url);
  await expect(teacher.locator('#all-entries tr')).toHaveCount(3);
  await teacher.getByRole('button', { name: 'Private' }).click();
  await expect(teacher.locator('#board-hint')).toContainText('Preview for the course staff');
  await expect(teacher.locator('#leaderboard tr').first()).toContainText('ui-student');
  await snapshot(teacher, testInfo, '135-competition-teacher-view');
  const [exported] = await Promise.all([teacher.waitForEvent('download'), teacher.getByRole('link', { name: 'Export CSV' }).click()]);
  expect(exported.suggestedFilename()).toMatch(/^competition-\d+\.csv$/);
});
