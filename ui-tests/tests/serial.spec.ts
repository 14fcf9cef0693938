import { APIRequestContext, expect, Locator, Page, test } from '@playwright/test';
import { apiToken, asToken, login, notebookJson, openNotebook, snapshot, startNotebook } from './helpers';

/**
 * Web Serial end to end, in Chromium with a scripted stand-in for
 * `navigator.serial` (there is no device here): the page attaches it, a
 * kernel cell writes to the device path and the stand-in receives the bytes,
 * the stand-in sends and a cell reads them, DTR/RTS and a baud change from
 * the kernel (RFC 2217) reach the stand-in's `setSignals` and `open`, a
 * reload re-attaches to the same pty, and Disconnect gives the kernel an I/O
 * error. Browsers without Web Serial are told to use Chrome or Edge;
 * read-only viewers get no Serial at all.
 */
const NOTEBOOK = '/notebook/ui-student/serial-bridge';

/**
 * The stand-in: one USB port (an Arduino's ids) whose streams the test
 * drives through `window.__serialStandIn`. Like Chrome, a port once chosen is
 * still granted after a reload (`getPorts()`).
 */
const STAND_IN = `(() => {
  const state = {
    received: [], opens: [], signals: [], closes: 0, controller: null,
    inputSignals: { dataCarrierDetect: false, clearToSend: true, ringIndicator: false, dataSetReady: true },
    push(text) { state.controller.enqueue(new TextEncoder().encode(text)); },
    text() { return new TextDecoder().decode(new Uint8Array(state.received)); }
  };
  class StandInPort extends EventTarget {
    constructor() { super(); this.readable = null; this.writable = null; }
    getInfo() { return { usbVendorId: 0x2341, usbProductId: 0x0043 }; }
    async open(options) {
      if (this.readable) { throw new DOMException('The port is already open.', 'InvalidStateError'); }
      state.opens.push(options);
      this.readable = new ReadableStream({
        start: controller => { state.controller = controller; },
        cancel: () => { state.controller = null; }
      });
      this.writable = new WritableStream({ write: chunk => { state.received.push(...chunk); } });
    }
    async close() { state.closes += 1; this.readable = null; this.writable = null; }
    async setSignals(signals) { state.signals.push({ ...signals }); }
    async getSignals() { return { ...state.inputSignals }; }
  }
  const port = new StandInPort();
  const serial = new EventTarget();
  serial.requestPort = async () => { sessionStorage.setItem('stand-in-granted', '1'); return port; };
  serial.getPorts = async () => (sessionStorage.getItem('stand-in-granted') ? [port] : []);
  Object.defineProperty(Navigator.prototype, 'serial', { get: () => serial, configurable: true });
  window.__serialStandIn = state;
})();`;

/** Firefox and Safari: no `navigator.serial`. */
const NO_WEB_SERIAL = `Object.defineProperty(Navigator.prototype, 'serial', { get: () => undefined, configurable: true });`;

const CELLS = [
  // 0: the device path, as any tool opens it
  "import json, os, serial\ninfo = json.load(open(os.path.expanduser('~/.cgu/serial/ttyWEB0.json')))\n" +
    "ser = serial.Serial(info['path'], 115200, timeout=10)\nser.write(b'hello device\\n'); ser.flush()\n" +
    "print('sent through', info['path'], '->', os.readlink(info['path']))",
  // 1
  "print('kernel got', ser.readline())",
  // 2: RFC 2217 carries what a pty cannot: DTR/RTS (an ESP32's reset), and the rate
  "r = serial.serial_for_url(info['rfc2217'], 115200, timeout=10)\nr.dtr = False\nr.rts = False\n" +
    "r.baudrate = 921600\nprint('signals sent at', r.baudrate)",
  // 3
  "print('rfc2217 got', r.readline()); r.close()",
  // 4: after the reload, the same open device
  "ser.write(b'again\\n'); ser.flush()\nprint('after reload got', ser.readline())",
  // 5: after Disconnect
  "try:\n    ser.read(1)\nexcept serial.SerialException as error:\n    print('I/O error:', error)"
];

/** Run one cell and give its output area. */
async function runCell(page: Page, index: number): Promise<Locator> {
  const cell = page.locator('.jp-Notebook .jp-Cell').nth(index);
  await cell.locator('.jp-InputPrompt').click();
  await page.keyboard.press('Shift+Enter');
  return cell.locator('.jp-OutputArea-output');
}

function standIn<T>(page: Page, script: string): Promise<T> {
  return page.evaluate(`(() => { const s = window.__serialStandIn; return ${script}; })()`) as Promise<T>;
}

async function received(page: Page, text: string): Promise<void> {
  await expect.poll(() => standIn<string>(page, 's.text()'), { timeout: 30_000 }).toContain(text);
}

test.describe.serial('a serial device of the laptop, used from the kernel', () => {
  let api: APIRequestContext;

  test.beforeAll(async ({ browser, baseURL }) => {
    const owner = await (await browser.newContext()).newPage();
    await login(owner, 'ui-student');
    api = await asToken(baseURL!, await apiToken(owner));
    await startNotebook(api, 'ui-student', 'serial-bridge');
    const response = await api.put(`${NOTEBOOK}/api/contents/serial.ipynb`, { data: notebookJson(CELLS) });
    expect([200, 201]).toContain(response.status());
  });

  test.afterAll(async () => {
    await api.post('/api/notebooks/ui-student/serial-bridge/stop?wait=true');
    await api.dispose();
  });

  test('bytes both ways, DTR/RTS from the kernel, a reload re-attaches, Disconnect is an I/O error', async ({
    page
  }, testInfo) => {
    test.setTimeout(300_000);
    await page.addInitScript(STAND_IN);
    await login(page, 'ui-student');
    await openNotebook(page, NOTEBOOK, 'lab/tree/serial.ipynb');
    await expect(page.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });

    await page.locator('[data-cgu="serial-button"]').first().click();
    const dialog = page.locator('[data-cgu="serial-dialog"]');
    await expect(dialog).toBeVisible();
    await dialog.locator('[data-cgu="serial-choose"]').click();
    await expect(dialog.locator('[data-cgu="serial-device"]')).toHaveText('Arduino (2341:0043)');
    await dialog.locator('[data-cgu="serial-baud"]').fill('115200');
    await snapshot(page, testInfo, '70-serial-dialog');
    await dialog.locator('[data-cgu="serial-connect"]').click();
    await expect(dialog).toHaveCount(0);
    const status = page.locator('[data-cgu="serial-status"]');
    await expect(status).toContainText('Serial ttyWEB0');
    expect(await standIn(page, 's.opens[0].baudRate')).toBe(115200);

    // The kernel writes to the device path; the device receives it.
    await expect(await runCell(page, 0)).toContainText('sent through', { timeout: 90_000 });
    await received(page, 'hello device\n');
    // The device sends; the kernel reads it.
    await standIn(page, "s.push('hello kernel\\n')");
    await expect(await runCell(page, 1)).toContainText("kernel got b'hello kernel\\n'", { timeout: 30_000 });

    // DTR/RTS and a new rate from the kernel reach the device.
    await expect(await runCell(page, 2)).toContainText('signals sent at 921600', { timeout: 30_000 });
    await expect
      .poll(() => standIn<boolean>(page, 's.signals.some(x => x.dataTerminalReady === false)'))
      .toBe(true);
    await expect
      .poll(() => standIn<boolean>(page, 's.signals.some(x => x.requestToSend === false)'))
      .toBe(true);
    await expect.poll(() => standIn<number>(page, 's.opens[s.opens.length - 1].baudRate')).toBe(921600);
    await standIn(page, "s.push('via rfc2217\\n')");
    await expect(await runCell(page, 3)).toContainText("rfc2217 got b'via rfc2217\\n'", { timeout: 30_000 });
    await expect(status).toContainText('↑');
    await page.locator('[data-cgu="serial-status"]').click();
    await expect(page.locator('[data-cgu="serial-attached"]')).toContainText('.cgu/serial/ttyWEB0');
    await expect(page.locator('[data-cgu="serial-rfc2217"]')).toContainText('rfc2217://127.0.0.1:');
    await snapshot(page, testInfo, '71-serial-in-use');
    await page.getByRole('button', { name: 'Close' }).click();

    // A reload: the page opens the granted device again and gets the same pty back.
    await page.reload();
    await expect(page.locator('body')).toHaveAttribute('data-cgu-access', 'owner', { timeout: 90_000 });
    await expect(status).toContainText('Serial ttyWEB0', { timeout: 30_000 });
    expect(await standIn(page, 's.opens[0].baudRate')).toBe(921600);
    await standIn(page, "s.push('after reload\\n')");
    await expect(await runCell(page, 4)).toContainText("after reload got b'after reload\\n'", {
      timeout: 30_000
    });
    await received(page, 'again\n');
    await snapshot(page, testInfo, '72-serial-after-reload');

    // Disconnect: the kernel's open port reads an I/O error at once, not a hang.
    await status.click();
    await page.getByRole('button', { name: 'Disconnect' }).click();
    await expect(status).toBeHidden();
    await expect(await runCell(page, 5)).toContainText('I/O error', { timeout: 30_000 });
    await snapshot(page, testInfo, '73-serial-disconnected');
  });

  test('a browser without Web Serial is told to use Chrome or Edge', async ({ page }, testInfo) => {
    await page.addInitScript(NO_WEB_SERIAL);
    await login(page, 'ui-student');
    await openNotebook(page, NOTEBOOK, 'lab/tree/serial.ipynb');
    await page.locator('[data-cgu="serial-button"]').first().click();
    const message = page.locator('[data-cgu="serial-unsupported"]');
    await expect(message).toContainText('Google Chrome or Microsoft Edge');
    await snapshot(page, testInfo, '74-serial-unsupported-browser');
    await page.getByRole('button', { name: 'Close' }).click();
  });

  test('an editor may attach devices, a read-only viewer may not', async ({ browser }) => {
    const grants: Array<[string, string]> = [
      ['ui-ta', 'edit'],
      ['ui-pupil', 'read']
    ];
    for (const [user, access] of grants) {
      const share = await (
        await api.post('/api/notebooks/ui-student/serial-bridge/shares', { data: { grantee: user, access } })
      ).json();
      const page = await (await browser.newContext()).newPage();
      await page.addInitScript(STAND_IN);
      await login(page, user);
      await openNotebook(page, NOTEBOOK, 'lab/tree/serial.ipynb');
      await expect(page.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60_000 });
      const answer = await page.evaluate(async url => {
        const response = await fetch(url);
        return { status: response.status, body: await response.json() };
      }, `${NOTEBOOK}/cgu-lab/serial`);
      if (access === 'edit') {
        await expect(page.locator('[data-cgu="serial-button"]').first()).toBeVisible();
        expect(answer.status).toBe(200);
      } else {
        await expect(page.locator('[data-cgu="share-button"], .jp-NotebookPanel-toolbar').first()).toBeVisible();
        await expect(page.locator('[data-cgu="serial-button"]')).toHaveCount(0);
        expect(answer.status).toBe(403);
        expect(answer.body.code).toBe('read_only');
      }
      await api.delete(`/api/notebooks/ui-student/serial-bridge/shares/${share.id}`);
      await page.close();
    }
  });
});
