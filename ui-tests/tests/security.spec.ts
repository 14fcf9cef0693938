import { expect, test } from '@playwright/test';
import { CHROMIUM } from '../chromium';
import { apiToken, asToken, login, snapshot } from './helpers';

/**
 * The click-to-admin attack, replayed as it was done, in Chromium with its popup
 * blocker on: a student plants a script in a cell output of a notebook she
 * signed in her own server, shares it read-only with an administrator, and the
 * administrator opens it and clicks once. The script opens a window on a URL the
 * proxy answers, reads the CSRF token from a controller page, makes the student
 * an administrator and creates an API token. Each step must fail now.
 */
test.use({
  // Playwright turns Chromium's popup blocker off by default; the attack needs it on.
  launchOptions: { ...CHROMIUM, ignoreDefaultArgs: ['--disable-popup-blocking'] }
});

const STUDENT = 'ui-pupil';
const NOTEBOOK = `/notebook/${STUDENT}/evil`;

/** What the planted script does, in the page that renders it; it reports every step. */
const ATTACK = `
window.__attack = async function () {
  const report = {};
  const controller = window.__controller;
  const steps = [
    ['popupSameOrigin', async () => {
      const w = window.open('/notebook/${STUDENT}/evil/no-such-page', 'x');
      await new Promise(r => setTimeout(r, 1500));
      return w ? String(w.document.body && w.document.body.innerText).slice(0, 40) : 'blocked';
    }],
    ['popupController', async () => {
      const w = window.open(controller + '/account', 'y');
      await new Promise(r => setTimeout(r, 1500));
      return w ? String(w.document.querySelector('meta[name=csrf-token]').content) : 'blocked';
    }],
    ['readCsrfRelative', async () => {
      const r = await fetch('/account', { credentials: 'include' });
      const m = (await r.text()).match(/name="csrf-token" content="([^"]+)"/);
      return m ? m[1] : 'no token in ' + r.status;
    }],
    ['readCsrfController', async () => {
      const r = await fetch(controller + '/account', { credentials: 'include' });
      return String(r.status);
    }],
    ['promote', async () => {
      const r = await fetch(controller + '/api/users/${STUDENT}', {
        method: 'PATCH', credentials: 'include',
        headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ role: 'admin' })
      });
      return String(r.status);
    }],
    ['promoteRelative', async () => {
      const r = await fetch('/api/users/${STUDENT}', {
        method: 'PATCH', credentials: 'include',
        headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ role: 'admin' })
      });
      return String(r.status);
    }],
    ['token', async () => {
      const r = await fetch(controller + '/api/me/tokens', {
        method: 'POST', credentials: 'include', mode: 'no-cors',
        headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ name: 'pwned' })
      });
      return String(r.status) + r.type;
    }],
    ['widenShare', async () => {
      const r = await fetch('/notebook/${STUDENT}/evil/cgu-lab/shares', {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ grantee: '${STUDENT}', access: 'edit' })
      });
      return String(r.status);
    }]
  ];
  for (const [name, step] of steps) {
    try { report[name] = await step(); } catch (e) { report[name] = 'refused: ' + e.name; }
  }
  window.__report = report;
  document.title = 'attack done';
  return report;
};
document.addEventListener('click', () => window.__attack(), { once: true });
`;

test('a script in a shared notebook cannot make its author an administrator', async ({
  browser,
  baseURL
}, testInfo) => {
  // The student prepares the trap in her own notebook and signs it there.
  const student = await (await browser.newContext()).newPage();
  await login(student, STUDENT);
  const api = await asToken(baseURL!, await apiToken(student));
  expect((await api.post('/api/notebooks', { data: { name: 'evil', cpu: 1, memory: '1Gi' } })).status()).toBe(201);
  expect((await api.post(`/api/notebooks/${STUDENT}/evil/start?wait=true`)).status()).toBe(202);
  const html = `<b id="bait">Click anywhere to see the results</b><script>window.__controller=${JSON.stringify(baseURL)};${ATTACK}</script>`;
  const notebook = {
    type: 'notebook',
    format: 'json',
    content: {
      cells: [
        {
          cell_type: 'code',
          source: 'show_results()',
          metadata: {},
          execution_count: 1,
          outputs: [{ output_type: 'display_data', data: { 'text/html': html }, metadata: {} }]
        }
      ],
      metadata: { kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' } },
      nbformat: 4,
      nbformat_minor: 5
    }
  };
  expect((await api.put(`${NOTEBOOK}/api/contents/results.ipynb`, { data: notebook })).status()).toBe(201);
  // Signing as the owner is hers to do in her own server.
  expect((await api.post(`${NOTEBOOK}/api/contents/results.ipynb/trust`)).status()).toBeLessThan(300);
  const shared = await api.post(`/api/notebooks/${STUDENT}/evil/shares`, {
    data: { grantee: 'ui-admin', access: 'read' }
  });
  expect(shared.status()).toBe(201);

  // The administrator opens it and clicks once.
  const adminContext = await browser.newContext();
  const admin = await adminContext.newPage();
  await login(admin, 'ui-admin');
  await admin.goto(`${NOTEBOOK}/lab/tree/results.ipynb`);
  await expect(admin.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
  // The notebook lives on its own origin, never the controller's.
  const here = new URL(admin.url());
  expect(here.origin).not.toBe(new URL(baseURL!).origin);
  expect(here.hostname).toMatch(/\.localhost$/);
  const bait = admin.getByText('Click anywhere to see the results');
  await expect(bait).toBeVisible();
  await bait.click();
  await admin.waitForTimeout(3000);
  await snapshot(admin, testInfo, '30-admin-clicked-the-bait');
  // Not the signer's page: the output is untrusted for anyone but its owner, so the script never ran.
  expect(await admin.evaluate(() => typeof (window as any).__attack)).toBe('undefined');

  // Had it run anyway, every step fails: replay it in the notebook's page, after a click.
  await admin.evaluate(
    ({ code, controller }) => {
      (window as any).__controller = controller;
      new Function(code)();
    },
    { code: ATTACK, controller: baseURL! }
  );
  await admin.locator('.jp-NotebookPanel').click();
  await admin.waitForFunction(() => document.title === 'attack done', null, { timeout: 30_000 });
  const report = await admin.evaluate(() => (window as any).__report);
  console.log('attack report:', JSON.stringify(report));
  testInfo.attach('attack-report', { body: JSON.stringify(report, null, 2), contentType: 'application/json' });
  // Windows of the notebook's own origin hold nothing of the controller; the controller's are out of reach.
  expect(String(report.popupSameOrigin)).not.toContain('csrf');
  expect(String(report.popupController)).toMatch(/^refused|^blocked/);
  expect(String(report.readCsrfRelative)).toMatch(/^refused|^no token/);
  expect(String(report.readCsrfController)).toMatch(/^refused/);
  expect(String(report.promote)).toMatch(/^refused|^403/);
  expect(String(report.promoteRelative)).not.toBe('200');
  expect(String(report.widenShare)).toBe('403');

  // And the controller agrees: the student is still a student, with no new token.
  const panel = await adminContext.newPage();
  await panel.goto('/account');
  const adminApi = await asToken(baseURL!, await apiToken(panel));
  const user = await (await adminApi.get(`/api/users/${STUDENT}`)).json();
  expect(user.role).toBe('student');
  const tokens = await (await adminApi.get('/api/me/tokens')).json();
  expect(tokens.map((t: { name: string }) => t.name)).not.toContain('pwned');
  await snapshot(admin, testInfo, '31-attack-refused');
  await api.dispose();
  await adminApi.dispose();
});
