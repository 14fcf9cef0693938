import { ChildProcess, execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { expect, request, test } from '@playwright/test';
import { snapshot } from './helpers';

/**
 * Log in with the school (issue 29): a controller of its own, configured with a real
 * OpenID provider (oidc-provider from npm, tests/directory/oidc_provider.mjs) on loopback.
 * A student clicks "Log in with Test school", signs in on the provider's own page and
 * lands on My notebooks as a student of the course the directory names.
 */
const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, '.venv/bin/cgu-lab');
const DIRECTORY = path.join(ROOT, 'tests/directory');
const port = 8800 + Math.floor(Math.random() * 80);
const providerPort = port + 100;
const base = `http://127.0.0.1:${port}`;
const issuer = `http://127.0.0.1:${providerPort}`;
const children: ChildProcess[] = [];
let data = '';

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 240; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise(resolve => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not answer`);
}

test.beforeAll(async () => {
  test.setTimeout(180_000);
  if (!fs.existsSync(path.join(DIRECTORY, 'node_modules/oidc-provider'))) {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--silent'], { cwd: DIRECTORY });
  }
  const config = {
    port: providerPort,
    clients: [
      {
        client_id: 'cgu-lab',
        client_secret: 'ui-test-client-secret',
        redirect_uris: [`${base}/login/school/school/callback`],
        post_logout_redirect_uris: [`${base}/login`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code']
      }
    ],
    users: {
      'sub-mira': {
        preferred_username: 'mira',
        password: 'mira-school-pass',
        email: 'mira@school.test',
        email_verified: true,
        name: 'Mira Student',
        groups: ['students', 'ml-101']
      }
    }
  };
  children.push(
    spawn('node', [path.join(DIRECTORY, 'oidc_provider.mjs')], {
      env: { ...process.env, OIDC_TEST_CONFIG: JSON.stringify(config), NODE_NO_WARNINGS: '1' },
      stdio: 'ignore'
    })
  );
  await waitFor(`${issuer}/.well-known/openid-configuration`);
  data = fs.mkdtempSync(path.join(os.tmpdir(), 'cgu-lab-ui-school-'));
  fs.chmodSync(data, 0o711);
  const state = path.join(data, 'state');
  execFileSync(BIN, ['admin', 'create-user', 'ui-boss', '--role', 'admin', '--password-stdin', '--data-dir', state], {
    input: 'ui-test-password\n'
  });
  execFileSync(BIN, ['admin', 'create-group', 'ml-101', '--data-dir', state]);
  const providers = [
    {
      kind: 'oidc',
      id: 'school',
      name: 'Test school',
      issuer,
      client_id: 'cgu-lab',
      client_secret: 'ui-test-client-secret',
      scopes: ['openid', 'email', 'profile', 'groups']
    }
  ];
  children.push(
    spawn(BIN, ['controller', '--data-dir', state, '--port', String(port)], {
      env: { ...process.env, CGU_LAB_SCHOOL_PROVIDERS: JSON.stringify(providers) },
      stdio: 'ignore'
    })
  );
  await waitFor(`${base}/api/health`);
  // The admin's mapping: the claim groups=ml-101 enrols into course ml-101.
  const admin = await request.newContext({ baseURL: base });
  await admin.post('/login', { form: { name: 'ui-boss', password: 'ui-test-password' }, headers: { Origin: base } });
  const page = await (await admin.get('/account')).text();
  const csrf = /name="csrf-token" content="([^"]*)"/.exec(page)![1];
  const rule = await admin.post('/api/school-login/rules', {
    data: { source: 'claim', attribute: 'groups', value: 'ml-101', course: 'ml-101' },
    headers: { 'X-CSRF-Token': csrf, Origin: base }
  });
  expect(rule.status()).toBe(201);
  await admin.dispose();
});

test.afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
  if (data) fs.rmSync(data, { recursive: true, force: true });
});

test('a student logs in with the school and lands on My notebooks in their course', async ({ page }, testInfo) => {
  await page.goto(`${base}/login`);
  await snapshot(page, testInfo, 'school-login-1-button');
  const started = Date.now();
  await page.getByRole('link', { name: 'Log in with Test school' }).click();
  await expect(page.getByRole('heading', { name: 'Test school' })).toBeVisible();
  await page.getByLabel('School user name').fill('mira');
  await page.getByLabel('School password').fill('mira-school-pass');
  await snapshot(page, testInfo, 'school-login-2-provider');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'My notebooks' })).toBeVisible();
  testInfo.annotations.push({ type: 'round trip', description: `${Date.now() - started} ms` });
  expect(new URL(page.url()).origin).toBe(base);
  const me = await (await page.request.get(`${base}/api/me`)).json();
  expect(me.name).toBe('mira');
  expect(me.role).toBe('student');
  expect(JSON.stringify(me)).toContain('ml-101');
  await snapshot(page, testInfo, 'school-login-3-my-notebooks');
  await page.goto(`${base}/courses`);
  await expect(page.getByText('ml-101').first()).toBeVisible();
});
