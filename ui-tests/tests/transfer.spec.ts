import { APIRequestContext, expect, Page, Route, test } from '@playwright/test';
import { execFileSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { apiToken, asToken, login, openNotebook, snapshot, startNotebook } from './helpers';

/**
 * The file manager in Chromium, through the controller's proxy: a tree of 200
 * files in 20 folders (and a 9 MiB file sent in chunks, one of whose
 * connections is dropped) uploaded with "Upload Folder" and seen in the file
 * browser; the folder downloaded as one zip whose checksums match; an
 * archive with a zip-slip entry refused with nothing written; and a
 * read-only viewer who may download but gets no upload.
 */
const NOTEBOOK = '/notebook/ui-student/transfer-files';
const PYTHON = path.resolve(__dirname, '../../.venv/bin/python');

test.use({ actionTimeout: 60_000 });

function sha(data: Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** tree/partNN/fileM.txt: 20 folders x 10 files, plus tree/big.bin (9 MiB: three chunks). */
function makeTree(): { root: string; sums: Record<string, string> } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cgu-transfer-'));
  const sums: Record<string, string> = {};
  for (let f = 0; f < 20; f++) {
    const folder = path.join(root, 'tree', `part${String(f).padStart(2, '0')}`);
    fs.mkdirSync(folder, { recursive: true });
    for (let n = 0; n < 10; n++) {
      const data = Buffer.concat([crypto.randomBytes(100 + 37 * n), Buffer.from(`file ${f}/${n}\n`.repeat(n * 20))]);
      fs.writeFileSync(path.join(folder, `file${n}.txt`), data);
      sums[`tree/part${String(f).padStart(2, '0')}/file${n}.txt`] = sha(data);
    }
  }
  const big = crypto.randomBytes(9 * 1024 * 1024);
  fs.writeFileSync(path.join(root, 'tree', 'big.bin'), big);
  sums['tree/big.bin'] = sha(big);
  return { root, sums };
}

/** {name: sha256} of the files in a zip (Python's zipfile: the reader students use). */
function zipSums(file: string): Record<string, string> {
  const script =
    'import hashlib, json, sys, zipfile\n' +
    'z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None\n' +
    'print(json.dumps({i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist() if not i.is_dir()}))';
  return JSON.parse(execFileSync(PYTHON, ['-c', script, file], { encoding: 'utf-8' }));
}

/** A zip with a good entry and one that climbs out of the folder. */
function slipZip(dir: string): string {
  const file = path.join(dir, 'slip.zip');
  execFileSync(PYTHON, [
    '-c',
    'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1], "w")\n' +
      'z.writestr("fine.txt", "ok"); z.writestr("../evil.txt", "boom"); z.close()',
    file
  ]);
  return file;
}

async function openLab(page: Page): Promise<void> {
  await openNotebook(page, NOTEBOOK);
  await expect(page.locator('.jp-DirListing-content')).toBeVisible({ timeout: 60_000 });
  // The workspace may bring back the folder an earlier test opened: start from the home.
  await page.locator('.jp-FileBrowser .jp-BreadCrumbs-home').first().click();
  await expect(page.locator('.jp-FileBrowser .jp-BreadCrumbs-item[data-path]')).toHaveCount(0);
}

function listed(page: Page, name: string) {
  return page.locator('.jp-DirListing-item').filter({ has: page.locator(`.jp-DirListing-itemText >> text="${name}"`) });
}

test.describe.serial('the file manager', () => {
  let api: APIRequestContext;
  const { root, sums } = makeTree();

  test.beforeAll(async ({ browser, baseURL }) => {
    const owner = await (await browser.newContext()).newPage();
    await login(owner, 'ui-student');
    api = await asToken(baseURL!, await apiToken(owner));
    await startNotebook(api, 'ui-student', 'transfer-files');
  });

  test.afterAll(async () => {
    await api.post('/api/notebooks/ui-student/transfer-files/stop?wait=true');
    await api.dispose();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('a tree of 200 files uploads with Upload Folder, resuming a dropped chunk', async ({ page }, testInfo) => {
    await login(page, 'ui-student');
    await openLab(page);
    // The second chunk of big.bin loses its connection once: the upload asks the size and goes on.
    let bigPuts = 0;
    await page.route('**/api/contents/tree/big.bin*', async route => {
      if (route.request().method() === 'PUT' && ++bigPuts === 2) {
        await route.abort('connectionreset');
        return;
      }
      await route.continue();
    });
    const button = page.locator('.jp-FileBrowser-toolbar [data-command="cgu-lab:upload-folder"]');
    await expect(button).toBeVisible();
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), button.click()]);
    await chooser.setFiles(path.join(root, 'tree'));
    const panel = page.locator('[data-cgu="transfer-panel"]');
    await expect(panel).toBeVisible();
    await expect(panel.locator('[data-cgu="transfer-figures"]')).toContainText('of 201 files');
    await snapshot(page, testInfo, '90-transfer-upload-progress');
    await expect(panel.locator('[data-cgu="transfer-message"]')).toHaveAttribute('data-outcome', 'done', {
      timeout: 150_000
    });
    await expect(panel.locator('[data-cgu="transfer-message"]')).toContainText('Uploaded 201 files');
    expect(bigPuts).toBeGreaterThanOrEqual(4); // 3 chunks, one of them sent twice
    await expect(listed(page, 'tree')).toBeVisible();
    await snapshot(page, testInfo, '91-transfer-upload-done');
    await listed(page, 'tree').dblclick();
    await expect(listed(page, 'part19')).toBeVisible();
    await expect(listed(page, 'big.bin')).toBeVisible();
  });

  test('a 1 GiB file uploads in chunks with progress and resumes after a dropped connection', async ({ page }, testInfo) => {
    test.setTimeout(900_000);
    // 1 GiB of a random MiB repeated: what the browser sends is as large as a real file.
    const folder = path.join(root, 'huge');
    fs.mkdirSync(folder, { recursive: true });
    const block = crypto.randomBytes(1024 * 1024);
    const file = path.join(folder, 'huge.bin');
    const out = fs.openSync(file, 'w');
    const hash = crypto.createHash('sha256');
    for (let i = 0; i < 1024; i++) {
      fs.writeSync(out, block);
      hash.update(block);
    }
    fs.closeSync(out);
    const expected = hash.digest('hex');
    await login(page, 'ui-student');
    await openLab(page);
    // Every chunk is counted as the browser sends it; only the first hundred are routed
    // through this test: each routed 4 MiB chunk crosses into this process and back.
    const target = '/api/contents/huge/huge.bin';
    const chunks = `**${target}*`;
    let puts = 0;
    page.on('request', request => {
      if (request.method() === 'PUT' && request.url().includes(target)) {
        puts++;
      }
    });
    let routed = 0;
    const dropOne = async (route: Route) => {
      if (route.request().method() === 'PUT' && ++routed === 100) {
        await route.abort('connectionreset'); // a dropped connection, 400 MiB in
        await page.unroute(chunks, dropOne);
        return;
      }
      await route.continue();
    };
    await page.route(chunks, dropOne);
    const button = page.locator('.jp-FileBrowser-toolbar [data-command="cgu-lab:upload-folder"]');
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), button.click()]);
    await chooser.setFiles(folder);
    const panel = page.locator('[data-cgu="transfer-panel"]');
    await expect(panel.locator('[data-cgu="transfer-figures"]')).toContainText('of 1 file');
    await expect(panel.locator('[data-cgu="transfer-figures"]')).toContainText('GiB', { timeout: 60_000 });
    await snapshot(page, testInfo, '94-transfer-1gib-progress');
    // ended either way: a refusal (the disk allowance, the host's free space) fails at once, saying which
    const message = panel.locator('[data-cgu="transfer-message"]');
    await expect(message).toHaveAttribute('data-outcome', /^(done|failed)$/, { timeout: 840_000 });
    expect(await message.getAttribute('data-outcome'), (await message.textContent()) ?? '').toBe('done');
    expect(routed).toBe(100);
    expect(puts).toBeGreaterThan(100); // every chunk, the dropped one sent again
    const stored = await (await api.get(`${NOTEBOOK}/api/contents/huge/huge.bin?content=0`)).json();
    expect(stored.size).toBe(1024 * 1024 * 1024);
    const served = crypto.createHash('sha256').update(await (await api.get(`${NOTEBOOK}/files/huge/huge.bin`)).body());
    expect(served.digest('hex')).toBe(expected);
    fs.rmSync(folder, { recursive: true, force: true });
    await api.delete(`${NOTEBOOK}/api/contents/huge/huge.bin`);
  });

  test('files dropped on the file browser upload with the same panel', async ({ page }) => {
    await login(page, 'ui-student');
    await openLab(page);
    // A script cannot make folder entries for a drop; files it can, and the drop is ours.
    const transfer = await page.evaluateHandle(() => {
      const data = new DataTransfer();
      data.items.add(new File(['first drop\n'], 'dropped-a.txt', { type: 'text/plain' }));
      data.items.add(new File(['second drop\n'], 'dropped-b.txt', { type: 'text/plain' }));
      return data;
    });
    await page.locator('.jp-DirListing-content').dispatchEvent('drop', { dataTransfer: transfer });
    const message = page.locator('[data-cgu="transfer-message"]');
    await expect(message).toHaveAttribute('data-outcome', 'done', { timeout: 60_000 });
    await expect(message).toContainText('Uploaded 2 files');
    await expect(listed(page, 'dropped-b.txt')).toBeVisible();
    const file = await (await api.get(`${NOTEBOOK}/api/contents/dropped-a.txt`)).json();
    expect(file.content).toBe('first drop\n');
  });

  test('the folder downloads as one zip with the same checksums', async ({ page }, testInfo) => {
    await login(page, 'ui-student');
    await openLab(page);
    await listed(page, 'tree').click({ button: 'right' });
    const item = page.getByRole('menuitem', { name: 'Download as Zip' });
    await expect(item).toBeVisible();
    await snapshot(page, testInfo, '92-transfer-download-menu');
    const [download] = await Promise.all([page.waitForEvent('download'), item.click()]);
    expect(download.suggestedFilename()).toBe('tree.zip');
    expect(zipSums((await download.path())!)).toEqual(sums);
  });

  test('an archive with a zip-slip entry is refused, and nothing is written', async ({ page }, testInfo) => {
    await login(page, 'ui-student');
    await openLab(page);
    await page.locator('.jp-DirListing-content').click({ button: 'right', position: { x: 40, y: 300 } });
    const item = page.getByRole('menuitem', { name: 'Upload and Extract Archive…' });
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), item.click()]);
    await chooser.setFiles(slipZip(root));
    const message = page.locator('[data-cgu="transfer-message"][data-outcome="failed"]');
    await expect(message).toContainText("'../evil.txt' climbs out", { timeout: 60_000 });
    await expect(message).toContainText('nothing was extracted');
    await snapshot(page, testInfo, '93-transfer-zip-slip-refused');
    const home = await (await api.get(`${NOTEBOOK}/api/contents/`)).json();
    const names = home.content.map((entry: { name: string }) => entry.name);
    expect(names).not.toContain('fine.txt');
    expect(names).not.toContain('slip.zip'); // uploaded only to be extracted: removed
    expect(names).not.toContain('evil.txt');
  });

  test('a read-only viewer may download but has no upload', async ({ browser }, testInfo) => {
    const share = await (
      await api.post('/api/notebooks/ui-student/transfer-files/shares', { data: { grantee: 'ui-pupil', access: 'read' } })
    ).json();
    const viewer = await (await browser.newContext()).newPage();
    await login(viewer, 'ui-pupil');
    await openLab(viewer);
    await expect(listed(viewer, 'tree')).toBeVisible();
    await expect(viewer.locator('[data-command="cgu-lab:upload-folder"]')).toBeHidden();
    const refused = await viewer.evaluate(async base => {
      const xsrf = document.cookie.match(/_xsrf=([^;]+)/)?.[1] ?? '';
      const response = await fetch(`${base}/cgu-lab/transfer/plan`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-XSRFToken': xsrf },
        body: JSON.stringify({ path: '', files: [{ path: 'x.txt', size: 1 }] })
      });
      return { status: response.status, body: await response.json() };
    }, NOTEBOOK);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('read_only');
    await listed(viewer, 'tree').click({ button: 'right' });
    const [download] = await Promise.all([
      viewer.waitForEvent('download'),
      viewer.getByRole('menuitem', { name: 'Download as Zip' }).click()
    ]);
    expect(Object.keys(zipSums((await download.path())!))).toHaveLength(201);
    await snapshot(viewer, testInfo, '94-transfer-readonly-download');
    await api.delete(`/api/notebooks/ui-student/transfer-files/shares/${share.id}`);
  });
});
