import { expect, Page, test } from '@playwright/test';
import * as fs from 'fs';
import { apiToken, asToken, login, snapshot } from './helpers';

/** An API client acting as the user logged in on `page` (a token made through the page). */
async function apiAs(page: Page, baseURL: string) {
  return asToken(baseURL, await apiToken(page));
}

const MALFORMED = [
  'username,display_name,email',
  'ui-s1,Ada Lovelace,ada@uni.example.edu',
  'ui-s2,"Alan Turing,alan@uni.example.edu',
  'ui-s3,Grace Hopper,grace@uni.example.edu,extra',
  'ui-s4,Edsger,edsger@nowhere',
  'ui-s1,Ada again,ada2@uni.example.edu'
].join('\n');

const GOOD = [
  'username,display_name,email',
  'ui-s1,Ada Lovelace,ada@uni.example.edu',
  'ui-s2,Alan Turing,alan@uni.example.edu',
  'ui-s3,Grace Hopper,grace@uni.example.edu'
].join('\n');

test('a teacher creates a course, enrols a class from CSV, promotes a TA and deploys lab files', async ({
  browser,
  baseURL
}, testInfo) => {
  test.setTimeout(300_000);
  const teacher = await (await browser.newContext()).newPage();
  await login(teacher, 'ui-teacher');

  // A new course, from the pages alone.
  await teacher.getByRole('link', { name: 'Courses' }).click();
  await expect(teacher.getByRole('heading', { name: 'New course' })).toBeVisible();
  await teacher.getByLabel('Name', { exact: true }).fill('ui-class');
  await teacher.getByLabel('Display name').fill('UI Class');
  await snapshot(teacher, testInfo, '60-new-course');
  await teacher.getByRole('button', { name: 'Create course' }).click();
  await teacher.waitForURL(/\/courses\/ui-class/);
  await expect(teacher.getByRole('heading', { level: 1 })).toContainText('UI Class');
  await expect(teacher.getByRole('tab', { name: 'Members', exact: true })).toHaveAttribute('aria-selected', 'true');
  await expect(teacher.locator('#members tr[data-member="ui-teacher"]')).toContainText('Teacher');

  // A malformed class list is refused whole, with every wrong line.
  const members = teacher.locator('#panel-members');
  await members.getByLabel('or paste it').fill(MALFORMED);
  await members.getByRole('button', { name: 'Import' }).click();
  const errors = teacher.locator('#import-errors');
  await expect(errors).toBeVisible();
  await expect(errors).toContainText('Nothing was imported: 4 problems');
  const lines = teacher.locator('#import-error-lines li');
  await expect(lines).toHaveCount(4);
  expect(await lines.evaluateAll(items => items.map(item => (item as HTMLElement).dataset.line))).toEqual(['3', '4', '5', '6']);
  await expect(lines.nth(0)).toContainText('Line 3:');
  await expect(lines.nth(0)).toContainText('not closed');
  await expect(lines.nth(1)).toContainText('4 fields');
  await expect(lines.nth(2)).toContainText('e-mail');
  await expect(lines.nth(3)).toContainText('also appears on line 2');
  await expect(teacher.locator('#members tr[data-member="ui-s1"]')).toHaveCount(0);
  await snapshot(teacher, testInfo, '61-course-import-refused');

  // The corrected file creates three students; their one-time passwords download as CSV.
  await members.getByLabel('or paste it').fill(GOOD);
  await members.getByRole('button', { name: 'Import' }).click();
  await expect(teacher.locator('#import-summary')).toContainText('3 account(s) created');
  await expect(errors).toBeHidden();
  await expect(teacher.locator('#import-created tr')).toHaveCount(3);
  for (const name of ['ui-s1', 'ui-s2', 'ui-s3']) {
    await expect(teacher.locator(`#members tr[data-member="${name}"]`)).toContainText('Student');
  }
  const [download] = await Promise.all([
    teacher.waitForEvent('download'),
    teacher.getByRole('button', { name: 'Download passwords (CSV)' }).click()
  ]);
  expect(download.suggestedFilename()).toBe('ui-class-passwords.csv');
  const csv = fs.readFileSync((await download.path())!, 'utf-8').trim().split(/\r?\n/);
  expect(csv[0]).toBe('username,one_time_password');
  expect(csv.slice(1).map(line => line.split(',')[0]).sort()).toEqual(['ui-s1', 'ui-s2', 'ui-s3']);
  expect(csv.slice(1).every(line => line.split(',')[1].length >= 8)).toBe(true);
  await snapshot(teacher, testInfo, '62-course-imported');

  // A TA: the teacher promotes them, they accept, and they show as the course's TA.
  await teacher.getByRole('tab', { name: 'TAs', exact: true }).click();
  await teacher.getByLabel('Make TA').fill('ui-ta');
  await teacher.getByRole('button', { name: 'Promote' }).click();
  await expect(teacher.locator('#ta-info')).toContainText('invited');
  await expect(teacher.locator('#tas tr[data-ta="ui-ta"]')).toContainText('invited as TA');
  const ta = await (await browser.newContext()).newPage();
  await login(ta, 'ui-ta');
  const taApi = await apiAs(ta, baseURL!);
  expect((await taApi.post('/api/me/invitations/ui-class')).status()).toBe(200);
  await teacher.reload();
  await expect(teacher.getByRole('tab', { name: 'TAs', exact: true })).toHaveAttribute('aria-selected', 'true');
  const taRow = teacher.locator('#tas tr[data-ta="ui-ta"]');
  await expect(taRow).toContainText('TA');
  await expect(taRow.getByRole('button', { name: 'Demote' })).toBeVisible();
  await snapshot(teacher, testInfo, '63-course-tas');

  // Lab files: a folder of the teacher's notebook copied to every member.
  const teacherApi = await apiAs(teacher, baseURL!);
  expect((await teacherApi.post('/api/notebooks', { data: { name: 'course-prep', cpu: 1, memory: '1Gi' } })).status()).toBe(201);
  expect((await teacherApi.post('/api/notebooks/ui-teacher/course-prep/start?wait=true')).status()).toBe(202);
  expect((await teacherApi.put('/notebook/ui-teacher/course-prep/api/contents/week1', { data: { type: 'directory' } })).status()).toBe(201);
  expect(
    (await teacherApi.put('/notebook/ui-teacher/course-prep/api/contents/week1/README.md', {
      data: { type: 'file', format: 'text', content: '# Week 1\nRead me first.\n' }
    })).status()
  ).toBe(201);
  await teacher.reload();
  await teacher.getByRole('tab', { name: 'Lab files' }).click();
  const files = teacher.locator('#panel-files');
  await expect(files.getByLabel('From')).toContainText('my notebook course-prep');
  await files.getByLabel('From').selectOption('notebook:course-prep');
  await files.getByLabel('Title').fill('Week 1');
  await files.getByLabel('Folder of that notebook').fill('week1');
  await files.getByLabel('To the folder').fill('week1');
  await files.getByRole('button', { name: 'Copy to every member' }).click();
  const row = teacher.locator('#deployments tr').filter({ hasText: 'Week 1' });
  await expect(row).toContainText(/done: Copied to 4 member\(s\)/, { timeout: 60_000 });
  await row.getByRole('button', { name: 'Report' }).click();
  const report = teacher.locator('#report-dialog');
  await expect(report).toBeVisible();
  await expect(report.locator('tr').filter({ hasText: 'ui-s1' }).locator('td').first()).toHaveText('1');
  await snapshot(teacher, testInfo, '64-course-lab-files');
  await report.getByRole('button', { name: 'Close' }).click();

  // The budget against its use, each student's quota, and the Live tab.
  await teacher.getByRole('tab', { name: 'Quotas and budget' }).click();
  await expect(teacher.locator('#budget tr').filter({ hasText: 'Running notebooks' })).toContainText('no budget');
  await expect(teacher.locator('#quotas tr[data-quota="ui-s1"]')).toContainText('platform default');
  await snapshot(teacher, testInfo, '66-course-quotas');
  await teacher.getByRole('tab', { name: 'Live' }).click();
  await expect(teacher.locator('#live-notebooks')).toContainText('No student notebook runs now.');
  await expect(teacher.getByLabel('Notebook', { exact: true })).toContainText('course-prep');
  await snapshot(teacher, testInfo, '67-course-live');

  // A new student logs in with the downloaded password, chooses their own, and lands on
  // the course's read-only page.
  const student = await (await browser.newContext()).newPage();
  const passwords = Object.fromEntries(csv.slice(1).map(line => line.split(',')));
  await student.goto('/login?next=%2Fcourses%2Fui-class');
  await student.getByLabel('User name').fill('ui-s1');
  await student.getByLabel('Password').fill(passwords['ui-s1']);
  await student.getByRole('button', { name: 'Log in' }).click();
  await expect(student.getByRole('heading', { name: 'My account' })).toBeVisible();
  await student.getByLabel('Current password').fill(passwords['ui-s1']);
  await student.getByLabel('New password', { exact: true }).fill('ui-s1-own-password');
  await student.getByLabel('Repeat new password').fill('ui-s1-own-password');
  await student.getByRole('button', { name: 'Change password' }).click();
  await student.waitForURL(/\/courses\/ui-class/);
  await expect(student.getByRole('heading', { name: 'Your submissions' })).toBeVisible();
  await expect(student.getByRole('tablist')).toHaveCount(0);
  await expect(student.locator('#student-material')).toContainText('courses/ui-class/week1');
  await snapshot(student, testInfo, '65-course-student-view');
  // Every spec shares one platform: leave the teacher's quota as it was found.
  expect((await teacherApi.post('/api/notebooks/ui-teacher/course-prep/stop?wait=true')).status()).toBe(202);
  await teacherApi.dispose();
});

test("a class list sent before the page's tabs have loaded waits for them, and never goes into the address", async ({
  browser
}) => {
  const teacher = await (await browser.newContext()).newPage();
  await login(teacher, 'ui-teacher');
  await teacher.goto('/courses');
  await teacher.getByLabel('Name', { exact: true }).fill('ui-held');
  await teacher.getByLabel('Display name').fill('UI Held');
  // The Members tab's script arrives only when the test lets it: a slow network, or a busy host.
  let release = () => {};
  const released = new Promise<void>(resolve => (release = resolve));
  await teacher.route('**/static/js/course_members.js', async route => {
    await released;
    await route.continue();
  });
  await teacher.getByRole('button', { name: 'Create course' }).click();
  await teacher.waitForURL(/\/courses\/ui-held/, { waitUntil: 'domcontentloaded' });
  const members = teacher.locator('#panel-members');
  await members.getByLabel('or paste it').fill(MALFORMED);
  await members.getByRole('button', { name: 'Import' }).click();
  await teacher.waitForTimeout(500); // what a browser's own submit would have done by now
  expect(new URL(teacher.url()).search).toBe(''); // not sent as ?text=... with the class list
  await expect(teacher.locator('#import-errors')).toBeHidden();
  release();
  // sent once the handlers are there: the refusal lists the wrong lines
  await expect(teacher.locator('#import-errors')).toContainText('Nothing was imported: 4 problems');
  expect(new URL(teacher.url()).search).toBe('');
  await teacher.context().close();
});
