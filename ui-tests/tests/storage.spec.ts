import { expect, Page, test } from '@playwright/test';
import { execFileSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { apiToken, asToken, login, PASSWORD, snapshot } from './helpers';

/**
 * Personal and course storage from the portal's Storage page, with no notebook running:
 * a folder and a 20 MiB file uploaded in chunks with a progress bar, the folder downloaded
 * as one zip whose checksums match, used / allowed shown and an upload past the allowance
 * refused with the figures; a course's storage written by its teacher and read-only for a
 * member (no upload controls, and the API refuses).
 */
const PYTHON = path.resolve(__dirname, '../../.venv/bin/python');
const USER = 'ui-store';
const COURSE = 'ui-store-course';

test.use({ actionTimeout: 60_000 });

function sha(data: Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** {name: sha256} of the files in a zip, read with Python's zipfile. */
function zipSums(file: string): Record<string, string> {
  const script =
    'import hashlib, json, sys, zipfile\n' +
    'z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None\n' +
    'print(json.dumps({i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist() if not i.is_dir()}))';
  return JSON.parse(execFileSync(PYTHON, ['-c', script, file], { encoding: 'utf-8' }));
}

async function apiAs(page: Page, baseURL: string) {
  return asToken(baseURL, await apiToken(page));
}

test.describe.serial('the storage page', () => {
  let root = '';
  const sums: Record<string, string> = {};

  /** dataset/{train,test}/partN.bin (5 small files), weights.bin (20 MiB), too-big.bin (50 MiB). */
  function makeFiles(): void {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'cgu-storage-'));
    for (let n = 0; n < 5; n++) {
      const data = crypto.randomBytes(2000 + 500 * n);
      fs.mkdirSync(path.join(root, 'dataset', n < 3 ? 'train' : 'test'), { recursive: true });
      const name = `dataset/${n < 3 ? 'train' : 'test'}/part${n}.bin`;
      fs.writeFileSync(path.join(root, name), data);
      sums[name] = sha(data);
    }
    fs.writeFileSync(path.join(root, 'weights.bin'), crypto.randomBytes(20 * 2 ** 20));
    fs.writeFileSync(path.join(root, 'too-big.bin'), Buffer.alloc(50 * 2 ** 20));
  }

  test.beforeAll(async ({ browser, baseURL }) => {
    makeFiles();
    const adminPage = await (await browser.newContext()).newPage();
    await login(adminPage, 'ui-admin');
    const admin = await apiAs(adminPage, baseURL!);
    const made = await admin.post('/api/users', { data: { name: USER, role: 'student', password: PASSWORD } });
    expect(made.status()).toBe(201);
    expect((await admin.put(`/api/users/${USER}/quota`, { data: { disk: '64Mi' } })).status()).toBe(200);
    expect((await admin.post('/api/groups', { data: { name: COURSE, display_name: 'Storage Course' } })).status()).toBe(201);
    for (const [user, manager] of [[USER, false], ['ui-teacher', true]] as const) {
      expect((await admin.put(`/api/groups/${COURSE}/members/${user}`, { data: { manager } })).status()).toBe(200);
    }
    await adminPage.context().close();
  });

  test.afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test('upload a folder and a file with progress, download the folder as a zip, see used / allowed', async ({
    page
  }, testInfo) => {
    await login(page, USER);
    await page.getByRole('link', { name: 'Storage' }).click();
    await expect(page.getByRole('heading', { name: 'My storage' })).toBeVisible();
    await expect(page.locator('#area-used')).toHaveText('0 B of 64.0 MiB used');
    await expect(page.locator('#storage-enforcement')).toContainText('no project quotas');

    await page.locator('#upload-folder').setInputFiles(path.join(root, 'dataset'));
    await expect(page.locator('#upload-text')).toHaveText(/Uploaded 5 files/);
    await expect(page.locator('#entries')).toContainText('dataset/');

    // Slow each chunk down a little so that the bar is seen part-way.
    await page.route('**/upload?**', async route => {
      await new Promise(resolve => setTimeout(resolve, 400));
      await route.continue();
    });
    await page.locator('#upload-files').setInputFiles(path.join(root, 'weights.bin'));
    await expect(page.locator('#upload-text')).toContainText(/weights\.bin — [\d.]+ (B|KiB|MiB) of 20\.0 MiB/);
    await expect
      .poll(async () => Number(await page.locator('#upload-progress').getAttribute('value')), { timeout: 30_000 })
      .toBeGreaterThan(0);
    await snapshot(page, testInfo, '140-storage-upload-progress');
    await expect(page.locator('#upload-text')).toHaveText(/Uploaded 1 file \(20\.0 MiB\)/, { timeout: 60_000 });
    await page.unroute('**/upload?**');
    await expect(page.locator('#area-used')).toHaveText(/^20\.\d MiB of 64\.0 MiB used$/);
    const meter = page.locator('#area-meter');
    expect(Number(await meter.getAttribute('value'))).toBeGreaterThan(20 * 2 ** 20);

    const row = page.locator('#entries tr').filter({ hasText: 'dataset/' });
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('link', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toBe('dataset.zip');
    const saved = path.join(root, 'downloaded.zip');
    await download.saveAs(saved);
    expect(zipSums(saved)).toEqual(sums);
    await snapshot(page, testInfo, '140-storage-my-storage');

    // Past the allowance: refused at once with the allowance and the use, nothing kept.
    await page.locator('#upload-files').setInputFiles(path.join(root, 'too-big.bin'));
    await expect(page.locator('#storage-error')).toContainText(/your disk allowance is 64 MiB and 20(\.\d+)? MiB of it is used/);
    await expect(page.locator('#entries')).not.toContainText('too-big.bin');
    await snapshot(page, testInfo, '140-storage-over-allowance');
  });

  test('a course storage is written by its teacher and read-only for a member', async ({ browser }, testInfo) => {
    const teacher = await (await browser.newContext()).newPage();
    await login(teacher, 'ui-teacher');
    await teacher.goto(`/storage?area=courses/${COURSE}`);
    await expect(teacher.getByRole('heading', { name: 'Storage Course' })).toBeVisible();
    await expect(teacher.locator('#area-access')).toHaveText('read and write');
    await teacher.locator('#upload-folder').setInputFiles(path.join(root, 'dataset'));
    await expect(teacher.locator('#upload-text')).toHaveText(/Uploaded 5 files/);
    await expect(teacher.getByLabel("TAs may write this course's storage")).not.toBeChecked();
    await teacher.context().close();

    const student = await (await browser.newContext()).newPage();
    await login(student, USER);
    await student.goto('/storage');
    await student.getByRole('button', { name: /Storage Course/ }).click();
    await expect(student.getByRole('heading', { name: 'Storage Course' })).toBeVisible();
    await expect(student.locator('#area-access')).toHaveText('read-only');
    await expect(student.locator('#area-mounted')).toHaveText(`In your notebooks: ~/courses/${COURSE}/shared`);
    await expect(student.locator('#entries')).toContainText('dataset/');
    await expect(student.locator('label[for="upload-files"]')).toBeHidden();
    await expect(student.locator('#entries').getByRole('button', { name: 'Delete' })).toHaveCount(0);
    const refused = await student.evaluate(async course => {
      const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')!.content;
      const response = await fetch(`/api/storage/courses/${course}/upload?path=x.txt&upload=student-try-1&offset=0&total=1`, {
        method: 'PUT',
        headers: { 'X-CSRF-Token': csrf },
        body: 'x'
      });
      return { status: response.status, body: await response.json() };
    }, COURSE);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('read-only for its members');
    await snapshot(student, testInfo, '140-storage-course-read-only');
  });
});
