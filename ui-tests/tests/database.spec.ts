import { IJupyterLabPageFixture } from '@jupyterlab/galata';
import {
  APIRequestContext,
  Browser,
  expect,
  Page,
  test,
  TestInfo
} from '@playwright/test';
import {
  apiToken,
  asToken,
  galataFromStart,
  login,
  notebookJson,
  openLab,
  snapshot,
  stopRunning
} from './helpers';

/**
 * The database-design course, in Chromium: the admin builds the *database* recipe's
 * environment through the API (JupySQL from PyPI, PostgreSQL from Debian; its build streams
 * progress), a student of the course starts a notebook in it, writes and runs a `%sql` cell
 * that creates a table and a row in the notebook's own PostgreSQL (no setting: the
 * environment connects `%sql` with `$DATABASE_URL`), opens the database's web client
 * (DbGate) from the launcher's Apps and finds the table and its row there. A student of no
 * such course, in a notebook of the same environment, can reach neither the web client
 * (the platform's proxy answers as if the notebook were not there, to a script and to the
 * browser) nor the database (psql from a cell of their own is refused at the socket), and
 * their own database is another, without the table.
 */
const ENVIRONMENT = 'databases';
const COURSE = 'ui-databases';
const STUDENT = 'ui-student';
const OTHER = 'ui-pupil';
const NAME = 'sql-lab';
const NOTEBOOK = `/notebook/${STUDENT}/${NAME}`;
const OTHER_NOTEBOOK = `/notebook/${OTHER}/${NAME}`;
const TABLE = 'grades';
const SQL =
  `%sql CREATE TABLE ${TABLE} (student text, mark int); ` +
  `INSERT INTO ${TABLE} VALUES ('Ada Lovelace', 7); SELECT * FROM ${TABLE}`;

test.use({ actionTimeout: 60_000 });

/**
 * `owner`'s notebook NAME in the database environment, started (what they had running,
 * stopped), drivable by galata from that start (helpers.ts: galataFromStart).
 */
async function startInEnvironment(
  api: APIRequestContext,
  owner: string
): Promise<void> {
  await stopRunning(api, owner);
  const made = await api.post('/api/notebooks', {
    data: { name: NAME, environment: ENVIRONMENT, cpu: 1, memory: '1Gi' }
  });
  expect(made.status()).toBe(201);
  galataFromStart(owner, NAME);
  expect(
    (await api.post(`/api/notebooks/${owner}/${NAME}/start?wait=true`)).status()
  ).toBe(202);
}

/**
 * Type `source` into the first cell of the open notebook `file` (made empty through the
 * contents API) and run it, as a person does; its output's text once there.
 */
async function runTyped(
  lab: IJupyterLabPageFixture,
  file: string,
  source: string
): Promise<string> {
  await expect(lab.locator('.jp-NotebookPanel')).toBeVisible({
    timeout: 60_000
  });
  expect(await lab.notebook.isOpen(file)).toBe(true);
  // The kernel must be connected first: a cell run while it connects is dropped.
  await expect(
    lab.locator('#jp-main-statusbar').getByText(/\| Idle/)
  ).toBeVisible({ timeout: 90_000 });
  expect(await lab.notebook.setCell(0, 'code', source)).toBe(true);
  expect(await lab.notebook.runCell(0, { wait: false })).toBe(true);
  const output = (await lab.notebook.getCellLocator(0))!.locator(
    '.jp-OutputArea-output'
  );
  await expect(output.first()).toBeVisible({ timeout: 90_000 });
  // The cell has finished once its prompt holds a number instead of `*`.
  await expect(
    (await lab.notebook.getCellLocator(0))!.locator('.jp-InputPrompt')
  ).toHaveText(/\[\d+\]/, {
    timeout: 90_000
  });
  return ((await lab.notebook.getCellTextOutput(0)) ?? []).join('\n');
}

/** A page of a new browser context, logged in as `name`, and an API token of theirs. */
async function as(browser: Browser, baseURL: string, name: string) {
  const page = await (await browser.newContext()).newPage();
  await login(page, name);
  return { page, api: await asToken(baseURL, await apiToken(page)) };
}

test.describe.serial('the database course', () => {
  let admin: APIRequestContext;
  let student: APIRequestContext;
  let other: APIRequestContext;

  test.beforeAll(async ({ browser, baseURL }) => {
    const { page, api } = await as(browser, baseURL!, 'ui-admin');
    admin = api;
    expect(
      (await admin.post('/api/groups', { data: { name: COURSE } })).status()
    ).toBe(201);
    const member = await admin.put(`/api/groups/${COURSE}/members/${STUDENT}`, {
      data: { manager: false }
    });
    expect(member.status()).toBe(200);
    await page.context().close();
  });

  test.afterAll(async () => {
    await student?.post(`/api/notebooks/${STUDENT}/${NAME}/stop?wait=true`);
    await other?.post(`/api/notebooks/${OTHER}/${NAME}/stop?wait=true`);
    for (const api of [student, other, admin]) {
      await api?.dispose();
    }
  });

  test('the admin builds the database environment, following its progress', async ({
    browser
  }, testInfo) => {
    // A first build fetches JupySQL and its dependencies from PyPI.
    test.setTimeout(15 * 60_000);
    const known = await admin.get(`/api/environments/${ENVIRONMENT}`);
    if (known.status() === 404) {
      const asked = await admin.post('/api/environments', {
        data: { recipe: 'database', name: ENVIRONMENT }
      });
      expect(asked.status()).toBe(202);
    } else {
      expect(known.status()).toBe(200); // built before on this platform: reused
    }
    // The build's progress (Server-Sent Events), until it is done; a finished build
    // answers with one event saying how it ended.
    const stream = await admin.get(`/api/environments/${ENVIRONMENT}/events`, {
      timeout: 14 * 60_000
    });
    expect(stream.status()).toBe(200);
    const events = (await stream.text())
      .split('\n')
      .filter(line => line.startsWith('data: '))
      .map(line => JSON.parse(line.slice(6)));
    const last = events[events.length - 1];
    expect(last.done, JSON.stringify(events.slice(-5))).toBe(true);
    expect(last.ok, JSON.stringify(events.slice(-5))).toBe(true);
    if (known.status() === 404) {
      expect(events.map(e => e.message).join('\n')).toContain('jupysql');
    }
    const built = await (
      await admin.get(`/api/environments/${ENVIRONMENT}`)
    ).json();
    expect(built.state).toBe('ready');
    expect(built.apps.map((a: { name: string }) => a.name)).toContain(
      'postgres'
    );

    const page = await (await browser.newContext()).newPage();
    await login(page, 'ui-admin');
    await page.goto('/admin/system');
    const row = page
      .locator('#environments tr')
      .filter({ hasText: ENVIRONMENT })
      .first();
    await expect(row).toContainText('ready');
    await expect(row).toContainText('jupysql');
    await snapshot(page, testInfo, '290-database-environment-built');
    await page.context().close();
  });

  test('a student of the course creates a table from a cell and sees it in the web client', async ({
    browser,
    baseURL
  }, testInfo) => {
    test.setTimeout(8 * 60_000);
    const { page, api } = await as(browser, baseURL!, STUDENT);
    student = api;
    await startInEnvironment(student, STUDENT);
    const put = await student.put(`${NOTEBOOK}/api/contents/tables.ipynb`, {
      data: notebookJson([''])
    });
    expect([200, 201]).toContain(put.status());

    const lab = await openLab(page, NOTEBOOK, 'tree/tables.ipynb');
    const output = await runTyped(lab, 'tables.ipynb', SQL);
    expect(output).toContain('Ada Lovelace');
    expect(output).toMatch(/\b7\b/);
    await snapshot(page, testInfo, '291-student-creates-a-table');

    // The launcher's Apps: the database's web client opens in a tab of its own.
    await lab.menu.clickMenuItem('File>New Launcher');
    const apps = page.locator('.jp-Launcher-section', { hasText: 'Apps' });
    const card = apps.locator('.jp-LauncherCard', { hasText: 'PostgreSQL' });
    await expect(card).toBeVisible({ timeout: 60_000 });
    await card.scrollIntoViewIfNeeded();
    await snapshot(page, testInfo, '292-launcher-apps');
    const [client] = await Promise.all([
      page.waitForEvent('popup'),
      card.click()
    ]);
    expect(new URL(client.url()).pathname).toBe(`${NOTEBOOK}/postgres/`);
    await findTableInDbGate(client, testInfo);
    await page.context().close();
  });

  test("another student's notebook reaches neither the web client nor the database", async ({
    browser,
    baseURL
  }, testInfo) => {
    test.setTimeout(8 * 60_000);
    const host = (
      await (await student.get(`${NOTEBOOK}/cgu-lab/apps/postgres`)).json()
    ).host as string;
    expect(host).toBeTruthy();

    const { page, api } = await as(browser, baseURL!, OTHER);
    other = api;
    // Through the platform: the student's notebook, its web client and database details.
    // The proxy answers as if there were no such notebook: nothing is told of it.
    for (const path of [
      `${NOTEBOOK}/postgres/`,
      `${NOTEBOOK}/cgu-lab/apps/postgres`
    ]) {
      const refused = await other.get(path, { maxRedirects: 0 });
      expect(refused.status(), path).toBe(404);
      expect((await refused.json()).code, path).toBe('not_found');
    }
    // And in the browser, the web client's address (as a link passed around would give it).
    const opened = await page.goto(`${NOTEBOOK}/postgres/`);
    expect(opened?.status()).toBe(404);
    await expect(
      page.getByText(/that you may open|no longer have access/i).first()
    ).toBeVisible();
    await snapshot(page, testInfo, '295-other-student-refused-the-web-client');

    // From a kernel of their own on the same machine: the student's socket is refused, and
    // their own database (the same environment's) is another one, without the table.
    await startInEnvironment(other, OTHER);
    const put = await other.put(`${OTHER_NOTEBOOK}/api/contents/probe.ipynb`, {
      data: notebookJson([''])
    });
    expect([200, 201]).toContain(put.status());
    const lab = await openLab(page, OTHER_NOTEBOOK, 'tree/probe.ipynb');
    const said = await runTyped(
      lab,
      'probe.ipynb',
      `!psql -h ${host} -c 'SELECT * FROM ${TABLE}'\n` +
        `%sql SELECT count(*) AS tables_named_${TABLE} FROM pg_tables WHERE tablename = '${TABLE}'`
    );
    expect(said).toMatch(/Permission denied|No such file/);
    expect(said).not.toContain('Ada Lovelace');
    expect(said).toMatch(/tables_named_grades[\s\S]*\b0\b/);
    await snapshot(page, testInfo, '296-other-student-kernel-refused');
    await page.context().close();
  });
});

/**
 * In DbGate (its own log-in off: the platform's proxy is the gate): the notebook's one
 * connection, which opens its one database; the table in its list; the row in the
 * table's data.
 */
async function findTableInDbGate(
  client: Page,
  testInfo: TestInfo
): Promise<void> {
  const connections = client.getByTestId('ConnectionList_container');
  await expect(connections).toBeVisible({ timeout: 90_000 });
  await connections.getByText("This notebook's PostgreSQL").click();
  const tables = client.getByTestId('app-object-group-items-tables');
  const table = tables.getByText(TABLE);
  await expect(table).toBeVisible({ timeout: 60_000 });
  await snapshot(client, testInfo, '293-web-client-lists-the-table');
  await table.click();
  await expect(client).toHaveTitle(new RegExp(`^${TABLE} - `));
  const row = client.locator('td[data-row="0"]');
  await expect(row.and(client.locator('[data-col="0"]'))).toHaveText(
    'Ada Lovelace',
    { timeout: 60_000 }
  );
  await expect(row.and(client.locator('[data-col="1"]'))).toHaveText('7');
  await expect(client.locator('td[data-row="1"]')).toHaveCount(0);
  await snapshot(client, testInfo, '294-web-client-shows-the-row');
}
