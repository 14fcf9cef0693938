import { Browser, expect, Page, test } from '@playwright/test';
import { apiToken, asToken, login, snapshot, stopRunning } from './helpers';

/**
 * The staff pages follow notebook changes as they happen (Server-Sent Events), not on a
 * timer: the Users list, an account's page and a course's Live tab show a student's
 * notebook running and then stopped well before their slow safety-net refresh (60 s).
 */
test.describe.configure({ mode: 'serial' });

// Well under the pages' fallback refresh: only an event can update them this soon.
const SOON = { timeout: 15_000 };

/** Call the controller's API from a logged-in page, as its scripts do. */
async function call(page: Page, method: string, path: string, body?: unknown): Promise<any> {
  return page.evaluate(
    async ({ method, path, body }) => {
      const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')!.content;
      const response = await fetch(path, {
        method,
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
        body: body === undefined ? undefined : JSON.stringify(body)
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    { method, path, body }
  );
}

async function loggedIn(browser: Browser, name: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await login(page, name);
  return page;
}

test('the Users list, an account page and the Live tab follow a notebook as it starts and stops', async ({
  browser,
  baseURL
}, testInfo) => {
  const [users, account, teacher, student] = await Promise.all(
    ['ui-admin', 'ui-admin', 'ui-teacher', 'ui-student'].map(name => loggedIn(browser, name))
  );
  await call(teacher, 'POST', '/api/groups', { name: 'live-course', kind: 'course' });
  await call(users, 'PUT', '/api/groups/live-course/members/ui-student', { manager: false });
  await stopRunning(await asToken(baseURL!, await apiToken(student)), 'ui-student');
  await call(student, 'POST', '/api/notebooks', { name: 'followed', cpu: 0.5, memory: '512Mi' });

  await users.goto('/admin/users');
  const row = users.locator('tr[data-user="ui-student"]');
  await expect(row).toContainText('none running');
  await account.goto('/admin/users/ui-student');
  const notebook = account.locator('tr[data-notebook="ui-student/followed"]');
  await expect(notebook).toContainText('stopped');
  await teacher.goto('/courses/live-course');
  await teacher.getByRole('tab', { name: 'Live' }).click();
  const live = teacher.locator('#live-notebooks');
  await expect(live).toContainText('No student notebook runs now.');

  await call(student, 'POST', '/api/notebooks/ui-student/followed/start?wait=true');
  await expect(notebook).toContainText('running', SOON);
  await expect(account.locator('#account-facts')).toContainText('1 running', SOON);
  await expect(row).toContainText('1 running', SOON);
  await expect(teacher.locator('tr[data-live="ui-student/followed"]')).toContainText('running', SOON);
  await snapshot(users, testInfo, '48-users-page-followed');
  await snapshot(teacher, testInfo, '68-course-live-followed');

  await call(student, 'POST', '/api/notebooks/ui-student/followed/stop?wait=true');
  await expect(notebook).toContainText('stopped', SOON);
  await expect(row).toContainText('none running', SOON);
  await expect(live).toContainText('No student notebook runs now.', SOON);
  await Promise.all([users, account, teacher, student].map(page => page.context().close()));
});
