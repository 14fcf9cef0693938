import { expect, Page, test } from '@playwright/test';
import { apiToken, asToken, login, notebookJson, openLab, snapshot, startNotebook } from './helpers';

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
  await startNotebook(studentApi, 'ui-student', 'compete', { galata: true });
  const contents = '/notebook/ui-student/compete/api/contents';
  expect((await studentApi.put(`${contents}/work.ipynb`, { data: notebookJson(['print(1)']) })).status()).toBe(201);
  const file = { type: 'file', format: 'text', content: PREDICTIONS };
  expect((await studentApi.put(`${contents}/preds.csv`, { data: file })).status()).toBe(201);
  const lab = await openLab(student, '/notebook/ui-student/compete', 'tree/work.ipynb');
  await expect(student.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
  expect(await lab.notebook.isOpen('work.ipynb')).toBe(true);
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

/** A notebook (nbformat 4) of code cells, as the file a student saves. */
function ipynb(sources: string[]): string {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: sources.map((source, i) => ({ cell_type: 'code', id: `c${i}`, metadata: {}, source, outputs: [], execution_count: null }))
  });
}

// Reads the hidden inputs and predicts "cat" for every third id: right on every row.
const MODEL = [
  "import csv, os\nrows = list(csv.DictReader(open(os.environ['CGU_COMPETITION_INPUT'])))",
  "with open(os.environ['CGU_COMPETITION_OUTPUT'], 'w') as out:\n    out.write('id,prediction\\n')\n    for row in rows:\n        out.write(row['id'] + ',' + ('cat' if int(row['id']) % 3 == 0 else 'dog') + '\\n')"
];

test('a code competition: the teacher uploads hidden inputs, a student submits a notebook that the platform runs and scores', async ({
  browser,
  baseURL
}, testInfo) => {
  test.setTimeout(240_000);
  const admin = await (await browser.newContext()).newPage();
  await login(admin, 'ui-admin');
  const adminApi = await asToken(baseURL!, await apiToken(admin));
  expect((await adminApi.post('/api/groups', { data: { name: 'ui-code', display_name: 'Code course' } })).status()).toBe(201);
  expect((await adminApi.put('/api/groups/ui-code/members/ui-teacher', { data: { manager: true } })).ok()).toBe(true);
  expect((await adminApi.put('/api/groups/ui-code/members/ui-student', { data: { manager: false } })).ok()).toBe(true);

  const teacher = await (await browser.newContext()).newPage();
  await login(teacher, 'ui-teacher');
  await teacher.goto('/competitions');
  const form = teacher.locator('#new-competition-form');
  await form.getByLabel('Course').selectOption('ui-code');
  await form.getByLabel('Name').fill('pets-code');
  await form.getByLabel('Title').fill('Cats or dogs, by notebook');
  await form.getByLabel('Start').fill(localTime(-1));
  await form.getByLabel('End').fill(localTime(24));
  await form.getByLabel('Kind').selectOption('code');
  await form.getByLabel('Run time limit (s)').fill('60');
  await form.getByRole('button', { name: 'Create competition' }).click();
  await teacher.waitForURL(/\/competitions\/\d+$/);
  await expect(teacher.locator('#code-hint')).toContainText('CGU_COMPETITION_INPUT');
  const inputs = ['id,photo', ...Array.from({ length: ROWS }, (_, i) => `${i + 1},hidden-photo-${i + 1}.png`)].join('\n') + '\n';
  const solution = csv(Array.from({ length: ROWS }, (_, i) => `${i + 1},${(i + 1) % 3 === 0 ? 'cat' : 'dog'}`));
  await uploadFile(teacher, 'solution', 'solution.csv', solution);
  await uploadFile(teacher, 'inputs', 'inputs.csv', inputs);
  await expect(teacher.locator('#competition-files')).toContainText('Hidden test inputs');
  const url = teacher.url();
  const id = url.split('/').pop();

  // The student sees no inputs, submits a notebook from the page, and its score reaches the board.
  const student = await (await browser.newContext()).newPage();
  await login(student, 'ui-student');
  await student.goto(url);
  await expect(student.getByRole('heading', { name: 'Submit a notebook' })).toBeVisible();
  await expect(student.locator('#competition-files')).not.toContainText('inputs');
  expect((await student.request.get(`/api/competitions/${id}/files/inputs`)).status()).toBe(404);
  await student.locator('#e-file').setInputFiles({ name: 'model.ipynb', mimeType: 'application/x-ipynb+json', buffer: Buffer.from(ipynb(MODEL)) });
  await student.locator('#entry-form').getByRole('button', { name: 'Submit' }).click();
  const first = student.locator('#my-entries tr').first();
  await expect(first).toHaveAttribute('data-state', 'scored', { timeout: 90_000 });
  await expect(first).toContainText('1.00000');
  await expect(student.locator('#leaderboard tr').first()).toContainText('ui-student');
  await expect(student.locator('#leaderboard tr').first()).toContainText('1.00000');
  // A failing cell: its number and type, never its message (which prints an input).
  const failing = ipynb([MODEL[0], "raise KeyError(rows[0]['photo'])"]);
  await student.locator('#e-file').setInputFiles({ name: 'broken.ipynb', mimeType: 'application/x-ipynb+json', buffer: Buffer.from(failing) });
  await student.locator('#entry-form').getByRole('button', { name: 'Submit' }).click();
  await expect(first).toHaveAttribute('data-state', 'failed', { timeout: 90_000 });
  await expect(first).toContainText('cell 2 of your notebook');
  await expect(first).toContainText('KeyError');
  await expect(student.locator('body')).not.toContainText('hidden-photo');
  await snapshot(student, testInfo, '136-code-competition-student');

  // From JupyterLab: the Compete button sends the open notebook to the code competition.
  const studentApi = await asToken(baseURL!, await apiToken(student));
  await startNotebook(studentApi, 'ui-student', 'code-comp', { galata: true });
  const contents = '/notebook/ui-student/code-comp/api/contents';
  expect((await studentApi.put(`${contents}/model.ipynb`, { data: notebookJson(MODEL) })).status()).toBe(201);
  const lab = await openLab(student, '/notebook/ui-student/code-comp', 'tree/model.ipynb');
  await expect(student.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
  expect(await lab.notebook.isOpen('model.ipynb')).toBe(true);
  await student.locator('[data-cgu="competition-button"]').first().click();
  await student.locator('[data-cgu="competition-select"]').selectOption({ label: 'Cats or dogs, by notebook (ui-code)' });
  await expect(student.locator('[data-cgu="competition-path"]')).toHaveValue('model.ipynb');
  await student.locator('[data-cgu="competition-submit"]').click();
  const result = student.locator('[data-cgu="competition-result"]');
  await expect(result).toHaveAttribute('data-state', 'scored', { timeout: 90_000 });
  await expect(result).toHaveText(/Entry \d+ scored 1\.00000 on the public leaderboard/);
  await snapshot(student, testInfo, '137-code-competition-jupyterlab');

  // The staff see the failed run's full traceback, input included.
  await teacher.goto(url);
  await expect(teacher.locator('#all-entries tr')).toHaveCount(3);
  await expect(teacher.locator('#all-entries')).toContainText('hidden-photo-1.png');
  await snapshot(teacher, testInfo, '138-code-competition-teacher');
});

test('in a competition with teams, a student creates a team on the page and sees its join code', async ({ browser, baseURL }, testInfo) => {
  const admin = await (await browser.newContext()).newPage();
  await login(admin, 'ui-admin');
  const adminApi = await asToken(baseURL!, await apiToken(admin));
  expect((await adminApi.post('/api/groups', { data: { name: 'ui-teams', display_name: 'Teams course' } })).status()).toBe(201);
  expect((await adminApi.put('/api/groups/ui-teams/members/ui-student', { data: { manager: false } })).ok()).toBe(true);
  const created = await adminApi.post('/api/groups/ui-teams/competitions', {
    data: {
      name: 'pairs',
      title: 'Cats or dogs, in pairs',
      starts_at: new Date(Date.now() - 3600_000).toISOString(),
      ends_at: new Date(Date.now() + 86400_000).toISOString(),
      metric: 'accuracy',
      teams: true,
      max_team_size: 2
    }
  });
  expect(created.status()).toBe(201);
  const { id } = await created.json();

  const student = await (await browser.newContext()).newPage();
  await login(student, 'ui-student');
  await student.goto(`/competitions/${id}`);
  const section = student.locator('#team-section');
  await expect(section.getByRole('heading', { name: 'Your team' })).toBeVisible();
  await section.getByLabel('Team name').fill('Night-Owls');
  await section.getByRole('button', { name: 'Create team' }).click();
  await expect(student.locator('#status')).toContainText('Team night-owls created');
  await expect(student.locator('#team-facts')).toContainText('night-owls');
  await expect(student.locator('#team-code')).toHaveText(/^[\w-]{12}$/);
  await expect(section.getByRole('button', { name: 'Copy the join code' })).toBeVisible();
  await snapshot(student, testInfo, '139-competition-student-team');
  // Leaving brings the forms back; a wrong code is refused with the API's sentence.
  await section.getByRole('button', { name: 'Leave team' }).click();
  await expect(section.getByLabel('Join code', { exact: true })).toBeVisible();
  await section.getByLabel('Join code', { exact: true }).fill('not-a-code');
  await section.getByRole('button', { name: 'Join team' }).click();
  await expect(student.locator('#status')).toContainText('no team of this competition has that join code');
});
