import { Browser, expect, Page, test } from '@playwright/test';
import * as fs from 'fs';
import { login, snapshot } from './helpers';

/**
 * The admin's pages on a teaching day: the Admin menu at 1280 px, the Users page and an
 * account's own page (role change, opening a notebook as oneself), name patterns that the
 * browser really checks, the audit log's filter and CSV, a queued notebook cancelled, and
 * declared GPUs on the monitoring page.
 */
test.describe.configure({ mode: 'serial' });

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

test('the admin pages sit under one Admin menu that fits 1280 px', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await login(page, 'ui-admin');
  const bar = page.locator('header.topbar');
  // One line: the brand, the main links, the Admin menu and the account all side by side.
  const height = (await bar.boundingBox())!.height;
  expect(height).toBeLessThan(64);
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link')).toHaveText(['My notebooks', 'Storage', 'Templates', 'Courses', 'Competitions', 'Training']);
  const menu = nav.locator('summary', { hasText: 'Admin' });
  await expect(page.getByRole('link', { name: 'Audit log' })).toBeHidden();
  await menu.click();
  const links = page.getByRole('list', { name: 'Admin pages' }).getByRole('link');
  await expect(links).toHaveText([
    'Users', 'Groups', 'Quotas', 'GPUs', 'Idle culler', 'Monitoring', 'Audit log', 'System'
  ]);
  const list = (await page.getByRole('list', { name: 'Admin pages' }).boundingBox())!;
  expect(list.x + list.width).toBeLessThanOrEqual(1280);
  await snapshot(page, testInfo, '40-admin-menu-1280');
  // Escape closes it and gives focus back; from the keyboard it opens with Enter.
  await page.keyboard.press('Escape');
  await expect(links.first()).toBeHidden();
  await expect(menu).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(links.first()).toBeVisible();
  await links.filter({ hasText: 'Monitoring' }).click();
  await expect(page).toHaveURL(/\/admin\/monitoring$/);
  await expect(page.locator('summary.current')).toHaveText(/Admin/);

  // A teacher gets the Courses entry and no admin pages.
  const teacher = await loggedIn(page.context().browser()!, 'ui-teacher');
  const teacherNav = teacher.getByRole('navigation', { name: 'Main' });
  await expect(teacherNav.getByRole('link', { name: 'Courses' })).toBeVisible();
  await expect(teacherNav.locator('summary')).toHaveCount(0);
  await expect(teacherNav.locator('a[href^="/admin/"]')).toHaveCount(0);
  await teacher.context().close();
});

test('name fields are checked by the browser, without a console error', async ({ browser }) => {
  const problems: string[] = [];
  const watch = (page: Page) =>
    page.on('console', message => {
      if (message.type() === 'error' || /pattern/i.test(message.text())) problems.push(message.text());
    });
  const checks: [string, string, string][] = [
    ['ui-student', '/notebooks/new', '#nb-name'],
    ['ui-student', '/training', '#j-name'],
    ['ui-admin', '/admin/groups', '#g-name'],
    ['ui-admin', '/admin/gpus', '#t-name'],
    ['ui-teacher', '/courses', '#c-name']
  ];
  for (const [who, path, selector] of checks) {
    const page = await loggedIn(browser, who);
    watch(page);
    await page.goto(path);
    const verdicts = await page.locator(selector).evaluate((input: HTMLInputElement) => {
      const verdict = (value: string) => {
        input.value = value;
        return [input.checkValidity(), input.validity.patternMismatch];
      };
      return { good: verdict('ml-2026'), dash: verdict('-ml'), upper: verdict('ML') };
    });
    expect(verdicts, `${path} ${selector}`).toEqual({
      good: [true, false],
      dash: [false, true],
      upper: [false, true]
    });
    await page.context().close();
  }
  expect(problems).toEqual([]);
});

test('the Users page and an account page: activity, role change, open as me', async ({ page, browser }, testInfo) => {
  // The pupil uses the platform; an admin readies a GPU so one of their notebooks waits.
  const pupil = await loggedIn(browser, 'ui-pupil');
  await login(page, 'ui-admin');
  await call(page, 'POST', '/api/gpus', { device_id: 'GPU-ui-0', model: 'NVIDIA RTX A5000', memory: '24Gi' });
  await call(page, 'PUT', '/api/gpu-types/premium', { display_name: 'Whole GPU' });
  await call(page, 'PUT', '/api/users/ui-pupil/quota', {
    cpu: 4, memory: '8Gi', notebooks: 4, gpus: { premium: 2 }
  });
  const gpu = { cpu: 0.5, memory: '512Mi', gpu_type: 'premium', gpus: 1 };
  await call(pupil, 'POST', '/api/notebooks', { name: 'holder', ...gpu });
  await call(pupil, 'POST', '/api/notebooks/ui-pupil/holder/start?wait=true');
  await call(pupil, 'POST', '/api/notebooks', { name: 'waiter', ...gpu });
  expect((await call(pupil, 'POST', '/api/notebooks/ui-pupil/waiter/start')).state).toBe('queued');

  await page.goto('/admin/users');
  const row = page.locator('tr[data-user="ui-pupil"]');
  // Every date on the pages in one shape (local time), how long ago as its title.
  const moment = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/;
  await expect(row.locator('td').nth(2)).toHaveText(moment); // last login
  await expect(row.locator('td').nth(3)).toHaveText(moment); // last activity
  await expect(row.locator('td').nth(2).locator('time')).toHaveAttribute('title', 'just now');
  await expect(row).toContainText('1 running, 1 waiting');
  await expect(row).toContainText('2 in all');
  await expect(page.locator('tr[data-user="ui-ta"] td').nth(2)).toHaveText('never');
  await expect(page.getByRole('table', { name: /Accounts with their role/ })).toBeVisible();
  await snapshot(page, testInfo, '41-users-page');

  await row.getByRole('link', { name: 'ui-pupil' }).click();
  await expect(page).toHaveURL(/\/admin\/users\/ui-pupil$/);
  await expect(page.getByRole('heading', { name: 'User ui-pupil' })).toBeVisible();
  await expect(page.locator('#quota-facts')).toContainText('1× premium');
  await expect(page.getByRole('table', { name: /Notebooks of this account/ })).toContainText('holder');
  await page.getByLabel('Role').selectOption('ta');
  await page.getByRole('button', { name: 'Change role' }).click();
  await expect(page.locator('#status')).toHaveText('ui-pupil is now a TA.');
  await expect(page.locator('#status')).toHaveClass(/info/);
  await expect(page.locator('#user-role')).toHaveText('ta');
  // The change is in the account's recent audit entries, readable (no raw JSON).
  const entry = page.locator('#user-audit tr', { hasText: 'user.updated' }).first();
  await expect(entry.locator('dl.details')).toContainText('role');
  await expect(entry.locator('dl.details')).toContainText('student → ta');
  await expect(entry).not.toContainText('{');
  await page.getByLabel('Role').selectOption('student');
  await page.getByRole('button', { name: 'Change role' }).click();
  await expect(page.locator('#user-role')).toHaveText('student');

  // Open as me: a time-limited grant to the admin, never the pupil's identity. Without
  // a reason the dialog stays and says why; with one, the page opens the notebook.
  await page.getByRole('button', { name: 'Open holder as me' }).click();
  await page.getByLabel('Access').selectOption('read');
  await page.getByRole('button', { name: 'Give me access' }).click();
  await expect(page.getByText(/say why you open ui-pupil\/holder/)).toBeVisible();
  await page.getByLabel('Reason').fill('help request in class');
  await snapshot(page, testInfo, '42-open-as-me-dialog');
  await page.getByRole('button', { name: 'Give me access' }).click();
  await page.waitForURL(/\/notebook\/ui-pupil\/holder\/lab/, { timeout: 120_000 });
  await snapshot(page, testInfo, '43-opened-as-me');
  const info = await page.evaluate(async () => (await fetch('/notebook/ui-pupil/holder/cgu-lab/info')).json());
  expect(info.user.name).toBe('ui-admin');
  expect(info.access).toBe('read');
  await page.goto('/admin/users/ui-pupil');
  await expect(page.locator('#user-audit')).toContainText('notebook.admin_opened');
  await pupil.context().close();
});

test('My notebooks: owner, last activity, queued shown and cancelled, persistent toggle', async ({ page, browser }, testInfo) => {
  const pupil = await loggedIn(browser, 'ui-pupil');
  const waiter = pupil.locator('tr[data-notebook="ui-pupil/waiter"]');
  await expect(waiter).toContainText('queued (waiting for a GPU)');
  await expect(waiter.locator('.note-info')).toContainText('in the queue');
  await expect(waiter.getByRole('button', { name: 'Delete' })).toBeEnabled();
  await expect(pupil.locator('#state-filter option')).toContainText(['queued']);
  await snapshot(pupil, testInfo, '44-queued-notebook');
  pupil.once('dialog', dialog => dialog.accept());
  await waiter.getByRole('button', { name: 'Delete' }).click();
  await expect(pupil.locator('#status')).toHaveText('waiter was deleted');
  await expect(waiter).toHaveCount(0);
  await pupil.context().close();

  await login(page, 'ui-admin');
  await page.getByLabel("everyone's").check();
  const holder = page.locator('tr[data-notebook="ui-pupil/holder"]');
  await expect(holder.locator('td').first()).toHaveText('ui-pupil');
  await expect(page.getByRole('columnheader', { name: 'Last activity' })).toBeVisible();
  const persistent = holder.getByRole('button', { name: 'Persistent' });
  await expect(persistent).toHaveAttribute('aria-pressed', 'false');
  await persistent.click();
  await expect(persistent).toHaveAttribute('aria-pressed', 'true');
  await expect(holder).toContainText('persistent');
  // The choice of list is remembered; the owner filter narrows it to one user.
  await page.reload();
  await expect(page.getByLabel("everyone's")).toBeChecked();
  await page.getByLabel('Owner', { exact: true }).fill('ui-pupil');
  await expect(page.locator('#notebooks tr')).toHaveCount(1);
  await snapshot(page, testInfo, '45-all-notebooks');
  await call(page, 'POST', '/api/users/ui-pupil/notebooks/stop');
});

test('monitoring tells detected from declared GPUs', async ({ page }, testInfo) => {
  await login(page, 'ui-admin');
  await page.goto('/admin/monitoring');
  const tile = page.locator('#summary .tile', { hasText: 'GPUs detected / declared' });
  await expect(tile.locator('dd')).toHaveText(/^\d+ \/ 1$/, { timeout: 30_000 });
  const counts = page.locator('[data-gpu-counts]').first();
  await expect(counts).toContainText('1 declared');
  await expect(page.locator('#nodes')).toContainText('not detected on this node');
  await snapshot(page, testInfo, '46-monitoring-gpus');
});

test('the audit log filters, reads well and downloads as CSV', async ({ page }, testInfo) => {
  await login(page, 'ui-admin');
  await page.goto('/admin/audit');
  await page.getByLabel('Who acted').fill('ui-admin');
  await page.getByLabel('Action').fill('user.');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page).toHaveURL(/actor=ui-admin&action=user\./);
  const rows = page.locator('#events tr');
  await expect(rows.first()).toContainText('user.updated');
  await expect(rows.first().locator('dl.details')).toContainText('ta → student');
  await expect(page.locator('#events')).not.toContainText('{"');
  await expect(page.getByRole('table', { name: /Audit log entries/ })).toBeVisible();
  await snapshot(page, testInfo, '47-audit-log');
  // A time range that ends before it starts is refused with a sentence.
  await page.getByLabel('From').fill('2030-01-02T10:00');
  await page.getByLabel('Until').fill('2030-01-01T10:00');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page.locator('#audit-error')).toContainText("'until' must be after 'since'");
  await page.getByRole('button', { name: 'Clear' }).click();
  await page.getByLabel('Action').fill('notebook.admin_opened');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(rows.first()).toContainText('help request in class');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Download CSV' }).click()
  ]);
  expect(download.suggestedFilename()).toMatch(/^cgu-lab-audit-.*\.csv$/);
  const text = fs.readFileSync((await download.path())!, 'utf8');
  const lines = text.trim().split(/\r?\n/);
  expect(lines[0]).toBe('id,at,actor,action,target,details');
  expect(lines.length).toBe(2);
  expect(lines[1]).toContain('notebook.admin_opened');
  expect(lines[1]).toContain('notebook:ui-pupil/holder');
});

test('a blank GPU field in the quota dialog means no GPUs; "any" means no limit', async ({ page }) => {
  await login(page, 'ui-admin');
  await page.goto('/admin/users');
  const dialog = page.locator('#quota-dialog');
  const open = async () => {
    await page.getByRole('button', { name: 'Quota of ui-ta' }).click();
    await expect(dialog).toBeVisible();
  };
  await open();
  await expect(dialog).toContainText('empty means no GPUs');
  await dialog.getByLabel('CPUs').fill('2');
  await dialog.getByLabel('GPUs per type').fill('');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('#status')).toHaveText('Quota of ui-ta saved.');
  expect((await call(page, 'GET', '/api/users/ui-ta/quota')).limits.gpus).toEqual({});
  await open();
  await expect(dialog.getByLabel('GPUs per type')).toHaveValue('');
  await dialog.getByLabel('GPUs per type').fill('any');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  expect((await call(page, 'GET', '/api/users/ui-ta/quota')).limits.gpus).toBeNull();
  await open();
  await expect(dialog.getByLabel('GPUs per type')).toHaveValue('any');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
});
