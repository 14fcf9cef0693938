import { expect, Page, test } from '@playwright/test';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { apiToken, asToken, login, platformData, snapshot } from './helpers';

/**
 * A VM notebook on the local backend, in Chromium: an admin declares the test VM image
 * (scripts/vm-test-image.sh: a Debian kernel and a busybox shell) as an environment, a
 * student creates a VM notebook on the New notebook page, its console opens through noVNC
 * on the notebook's origin, and a command typed on the VM's screen runs in the guest: it
 * writes into the notebook's home (the guest's shared folder), read back here on the host.
 */
const NAME = `vm-${Date.now() % 1_000_000}`;
const NOTEBOOK = `/notebook/ui-student/${NAME}`;

/** The test image, copied where every notebook account may read it (as an admin installs one). */
function installImage(): string {
  const built = execFileSync(path.resolve(__dirname, '../../scripts/vm-test-image.sh'), { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  const folder = fs.mkdtempSync('/tmp/cgu-lab-ui-vm-');
  fs.chmodSync(folder, 0o755);
  fs.cpSync(built, path.join(folder, 'image'), { recursive: true });
  return path.join(folder, 'image');
}

/** A path below this run's platform data folder (helpers.platformData), if it exists. */
function stateFile(...sub: string[]): string | undefined {
  const candidate = path.join(platformData(), 'state', ...sub);
  return fs.existsSync(candidate) ? candidate : undefined;
}

/** A file in the notebook's home on this machine (the guest's /mnt/home). */
function homeFile(file: string): string | undefined {
  return stateFile('homes', 'ui-student', NAME, file);
}

/**
 * What the guest wrote on its serial port (QEMU's `serial.log` in the VM's runtime folder, the
 * newest one: this test's VM is the only one running): its init prints a line there once the
 * disk and the shared home are mounted.
 */
function serialLog(): string {
  const run = path.join(platformData(), 'state', 'run');
  const logs = (fs.existsSync(run) ? fs.readdirSync(run).map(id => path.join(run, id, 'serial.log')) : [])
    .filter(file => fs.existsSync(file))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  return logs.length ? fs.readFileSync(logs[0], 'utf8') : '';
}

/** What a failure should say: the console's state, the focused element, the pages, the guest's log. */
async function diagnosis(page: Page): Promise<string> {
  const focused = await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120) ?? 'none');
  return [
    `console: ${await page.locator('#vm-state').textContent()}`,
    `focused: ${focused}`,
    `pages: ${page.context().pages().map(open => open.url()).join(' ')}`,
    `serial log (tail): ${serialLog().slice(-800)}`
  ].join('\n');
}

test('a VM notebook console in the browser runs what is typed', async ({ page, baseURL }, testInfo) => {
  test.setTimeout(300_000);
  const image = installImage();
  await login(page, 'ui-admin');
  const admin = await asToken(baseURL!, await apiToken(page));
  const declared = await admin.put('/api/environments/ui-vm', {
    data: { display_name: 'Test VM (busybox)', local_prefix: image }
  });
  expect(declared.status()).toBe(200);
  await page.context().clearCookies();

  await login(page, 'ui-student');
  const student = await asToken(baseURL!, await apiToken(page));
  await page.goto('/notebooks/new');
  await page.getByLabel('Name').fill(NAME);
  await page.getByLabel('Environment').selectOption('ui-vm');
  await page.getByLabel('Kind').selectOption('vm');
  await page.getByLabel('CPUs').fill('1');
  await page.getByLabel('Memory').fill('512Mi');
  // The start page follows the VM's start, then opens its console on the notebook's origin.
  await page.getByRole('button', { name: 'Create and start' }).click();
  await expect(page.locator('#vm-state')).toHaveText('Connected', { timeout: 150_000 });
  expect(new URL(page.url()).pathname).toBe(`${NOTEBOOK}/lab`);
  await expect(page.locator('#vm-screen canvas')).toBeVisible();
  const accel = await page.locator('body').getAttribute('data-accel');
  await expect(page.locator('#vm-accel')).toBeVisible({ visible: accel === 'tcg' });

  // The guest boots while the console is up: its init says on the serial port when the shell
  // comes; then what is typed on the focused screen runs there.
  const screen = page.locator('#vm-screen canvas');
  await expect
    .poll(() => serialLog(), { timeout: 120_000, message: 'the guest never said it was ready' })
    .toContain('cgu-lab test VM ready');
  const deadline = Date.now() + 60_000;
  while (homeFile('booted') === undefined) {
    if (Date.now() > deadline) {
      throw new Error(`what was typed never ran in the guest:\n${await diagnosis(page)}`);
    }
    await screen.click();
    await expect(screen).toBeFocused();
    await page.keyboard.type('touch /mnt/home/booted\n', { delay: 20 });
    await expect.poll(() => homeFile('booted'), { timeout: 5000 }).toBeTruthy().catch(() => undefined);
  }
  // Keys as typed, without Shift (Playwright presses none): the guest's own /proc/version, copied.
  await page.keyboard.type('cp /proc/version /mnt/home/from-chromium.txt; uname -sr\n', { delay: 20 });
  await expect.poll(() => homeFile('from-chromium.txt'), { timeout: 30_000 }).toBeTruthy();
  expect(fs.readFileSync(homeFile('from-chromium.txt')!, 'utf8')).toMatch(/^Linux version 6\./);
  await page.waitForTimeout(500); // the screen update after the command (what the screenshot shows)
  await snapshot(page, testInfo, '110-vm-console');

  expect((await student.post(`/api/notebooks/ui-student/${NAME}/stop?wait=true`)).status()).toBe(202);
  fs.rmSync(path.dirname(image), { recursive: true, force: true });
});
