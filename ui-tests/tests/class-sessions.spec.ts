import { expect, test } from '@playwright/test';
import {
  apiToken,
  asToken,
  login,
  notebookJson,
  snapshot,
  startNotebook,
  stopRunning
} from './helpers';

/**
 * Class sessions (issue 25): a teacher books a session with the course page's form; the
 * platform holds its capacity and pre-warms the student's notebook (the controller's own
 * loop); the course tab shows who is in and what is held, the student sees the session
 * on My notebooks with Open, the admin sees it under Bookings ahead; the teacher cancels.
 */
const COURSE = 'ui-sessions';

/** A datetime-local value (the browser's zone) `minutes` from now. */
function localTime(minutes: number): string {
  const when = new Date(Date.now() + minutes * 60_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}T${pad(when.getHours())}:${pad(when.getMinutes())}`;
}

test('a teacher books a class session; the student finds a pre-warmed notebook; the admin sees it ahead', async ({
  browser,
  baseURL
}, testInfo) => {
  test.setTimeout(420_000);
  const admin = await (await browser.newContext()).newPage();
  await login(admin, 'ui-admin');
  const adminApi = await asToken(baseURL!, await apiToken(admin));
  expect(
    (
      await adminApi.post('/api/groups', {
        data: { name: COURSE, display_name: 'Sessions course' }
      })
    ).status()
  ).toBe(201);
  expect(
    (
      await adminApi.put(`/api/groups/${COURSE}/members/ui-teacher`, {
        data: { manager: true }
      })
    ).ok()
  ).toBe(true);
  expect(
    (
      await adminApi.put(`/api/groups/${COURSE}/members/ui-student`, {
        data: { manager: false }
      })
    ).ok()
  ).toBe(true);

  // The teacher's template: one notebook file, for the course.
  const teacher = await (await browser.newContext()).newPage();
  await login(teacher, 'ui-teacher');
  const teacherApi = await asToken(baseURL!, await apiToken(teacher));
  await startNotebook(teacherApi, 'ui-teacher', 'sprep');
  const put = await teacherApi.put(
    '/notebook/ui-teacher/sprep/api/contents/lab5.ipynb',
    {
      data: notebookJson(['print("week 5")'])
    }
  );
  expect(put.status()).toBe(201);
  const published = await teacherApi.post('/api/templates', {
    data: {
      name: 'ui-session-lab',
      notebook: 'sprep',
      paths: ['lab5.ipynb'],
      visibility: 'group',
      group: COURSE,
      cpu: 1,
      memory: '1Gi'
    }
  });
  expect(published.status()).toBe(201);
  await stopRunning(teacherApi, 'ui-teacher');

  // Book with the form: starts in 3 minutes, pre-warmed 5 minutes ahead (so: now).
  const student = await (await browser.newContext()).newPage();
  await login(student, 'ui-student');
  await stopRunning(
    await asToken(baseURL!, await apiToken(student)),
    'ui-student'
  );
  await teacher.goto(`/courses/${COURSE}#sessions`);
  const form = teacher.locator('#session-form');
  await expect(form).toBeVisible();
  await form.getByLabel('Title').fill('Week 5 lab');
  await expect(
    form.locator('#session-template option[value="ui-session-lab"]')
  ).toHaveCount(1);
  await form.getByLabel('Template').selectOption('ui-session-lab');
  await form.getByLabel('Starts').fill(localTime(3));
  await form.getByLabel('Length (minutes)').fill('30');
  await form.getByLabel('Pre-warm (minutes before)').fill('5');
  await form.getByLabel('Grace (minutes after the start)').fill('15');
  await snapshot(teacher, testInfo, '250-session-book-form');
  await form.getByRole('button', { name: 'Book' }).click();
  await expect(teacher.locator('#status')).toContainText('Booked "Week 5 lab"');
  const row = teacher
    .locator('#sessions tr[data-session]')
    .filter({ hasText: 'Week 5 lab' });
  await expect(row).toContainText('1 CPU, 1.0 GiB for 1 seat');
  await expect(row).toContainText('held now');

  // The controller's loop pre-warms the student's notebook: the tab shows them in.
  await expect(async () => {
    await teacher.locator('#sessions-refresh').click();
    await expect(row.locator('[data-session-in="1"]')).toBeVisible({
      timeout: 2_000
    });
  }).toPass({ timeout: 240_000, intervals: [3_000] });
  await expect(row).toContainText('ui-student');
  await snapshot(teacher, testInfo, '251-session-course-tab-who-is-in');

  // The student sees it on My notebooks, with Open.
  await student.goto('/notebooks');
  const mine = student
    .locator('#my-sessions tr[data-session]')
    .filter({ hasText: 'Week 5 lab' });
  await expect(mine).toBeVisible();
  await expect(mine.getByRole('button', { name: 'Open' })).toBeVisible();
  await expect(mine).toContainText('running');
  await snapshot(student, testInfo, '252-session-my-notebooks');

  // The admin's monitoring page: bookings ahead.
  await admin.goto('/admin/monitoring');
  const ahead = admin
    .locator('#bookings-ahead tr[data-session]')
    .filter({ hasText: 'Week 5 lab' });
  await expect(ahead).toContainText(COURSE);
  await expect(ahead).toContainText('1 in');
  await snapshot(admin, testInfo, '253-session-bookings-ahead');

  // The teacher cancels: the capacity is free; the session leaves the student's list.
  teacher.once('dialog', dialog => dialog.accept());
  await row.getByRole('button', { name: 'Cancel' }).click();
  await expect(row).toHaveAttribute('data-phase', 'cancelled');
  await student.goto('/notebooks');
  await expect(student.locator('#my-sessions-section')).toBeHidden();
  await stopRunning(
    await asToken(baseURL!, await apiToken(student)),
    'ui-student'
  );
});
