/**
 * Pure helpers of the Serial feature: line options, labels for ports and
 * counters, the sentence for browsers without Web Serial, and what a page
 * remembers across a reload to re-attach to the same pty.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { formatBytes } from '../format';
import {
  ISerialInputSignals,
  ISerialOptions,
  ISerialPortInfo
} from './webSerial';

/** Rates offered in the dialog (74880: ESP8266 boot messages; 250000: 3D printers). */
export const BAUD_RATES = [
  300, 1200, 2400, 4800, 9600, 19200, 38400, 57600, 74880, 115200, 230400,
  250000, 460800, 500000, 921600, 1000000, 1500000, 2000000
];

/** 115200 8N1 without flow control: what boards' USB serial expects. */
export const DEFAULT_OPTIONS: Required<Omit<ISerialOptions, 'bufferSize'>> = {
  baudRate: 115200,
  dataBits: 8,
  stopBits: 1,
  parity: 'none',
  flowControl: 'none'
};

/** Options with every field set (the defaults where missing). */
export function fullOptions(
  options: Partial<ISerialOptions>
): Required<Omit<ISerialOptions, 'bufferSize'>> {
  return {
    baudRate: options.baudRate ?? DEFAULT_OPTIONS.baudRate,
    dataBits: options.dataBits ?? DEFAULT_OPTIONS.dataBits,
    stopBits: options.stopBits ?? DEFAULT_OPTIONS.stopBits,
    parity: options.parity ?? DEFAULT_OPTIONS.parity,
    flowControl: options.flowControl ?? DEFAULT_OPTIONS.flowControl
  };
}

/** Options out of the settings (schema/serial.json), each checked. */
export function optionsFromSettings(
  read: (key: string) => unknown
): Required<Omit<ISerialOptions, 'bufferSize'>> {
  const baud = Number(read('baudRate'));
  const parity = read('parity');
  return {
    baudRate:
      Number.isInteger(baud) && baud > 0 ? baud : DEFAULT_OPTIONS.baudRate,
    dataBits: read('dataBits') === 7 ? 7 : 8,
    stopBits: read('stopBits') === 2 ? 2 : 1,
    parity: parity === 'even' || parity === 'odd' ? parity : 'none',
    flowControl: read('flowControl') === 'hardware' ? 'hardware' : 'none'
  };
}

/** Whether two option sets open the port the same way. */
export function sameOptions(
  a: Partial<ISerialOptions>,
  b: Partial<ISerialOptions>
): boolean {
  const x = fullOptions(a);
  const y = fullOptions(b);
  return (
    x.baudRate === y.baudRate &&
    x.dataBits === y.dataBits &&
    x.stopBits === y.stopBits &&
    x.parity === y.parity &&
    x.flowControl === y.flowControl
  );
}

/** "8N1"-style summary: "115200 baud, 8N1". */
export function optionsText(
  options: Partial<ISerialOptions>,
  trans: TranslationBundle
): string {
  const o = fullOptions(options);
  const parity = { none: 'N', even: 'E', odd: 'O' }[o.parity];
  const line = `${o.dataBits}${parity}${o.stopBits}`;
  return o.flowControl === 'hardware'
    ? trans.__('%1 baud, %2, RTS/CTS', o.baudRate, line)
    : trans.__('%1 baud, %2', o.baudRate, line);
}

/** USB vendors of the boards students plug in most. */
const VENDORS: Record<number, string> = {
  0x2341: 'Arduino',
  0x2a03: 'Arduino',
  0x303a: 'Espressif',
  0x10c4: 'Silicon Labs CP210x',
  0x1a86: 'WCH CH340',
  0x0403: 'FTDI',
  0x0d28: 'micro:bit',
  0x2e8a: 'Raspberry Pi',
  0x239a: 'Adafruit',
  0x1366: 'SEGGER J-Link'
};

const hex4 = (n: number) => n.toString(16).padStart(4, '0');

/** "Arduino (2341:0043)", "USB device (1234:5678)", or "Serial port". */
export function portLabel(
  info: ISerialPortInfo,
  trans: TranslationBundle
): string {
  if (info.usbVendorId === undefined) {
    return info.bluetoothServiceClassId !== undefined
      ? trans.__('Bluetooth serial port')
      : trans.__('Serial port');
  }
  const ids = `${hex4(info.usbVendorId)}:${hex4(info.usbProductId ?? 0)}`;
  const vendor = VENDORS[info.usbVendorId];
  return vendor ? `${vendor} (${ids})` : trans.__('USB device (%1)', ids);
}

/** Whether a port is the one a page had before a reload (same USB ids). */
export function sameDevice(a: ISerialPortInfo, b: ISerialPortInfo): boolean {
  return (
    a.usbVendorId === b.usbVendorId &&
    a.usbProductId === b.usbProductId &&
    a.bluetoothServiceClassId === b.bluetoothServiceClassId
  );
}

/** "↑ 1.2 KiB ↓ 34 B": to the device, from the device. */
export function countersText(toDevice: number, fromDevice: number): string {
  return `↑ ${formatBytes(toDevice)} ↓ ${formatBytes(fromDevice)}`;
}

/** Why there is no Serial here, naming the browsers that have it. */
export function unsupportedMessage(
  trans: TranslationBundle,
  secure: boolean
): string {
  if (!secure) {
    return trans.__(
      'Serial devices can only be used on a secure page (https). Ask your teacher for the https address of the platform, and open it in Google Chrome or Microsoft Edge.'
    );
  }
  return trans.__(
    'This browser cannot reach serial devices: it has no Web Serial. Open this notebook in Google Chrome or Microsoft Edge on the computer the device is plugged into.'
  );
}

/** The modem lines as the server wants them. */
export function modemLines(signals: ISerialInputSignals): {
  cts: boolean;
  dsr: boolean;
  ri: boolean;
  dcd: boolean;
} {
  return {
    cts: signals.clearToSend,
    dsr: signals.dataSetReady,
    ri: signals.ringIndicator,
    dcd: signals.dataCarrierDetect
  };
}

/** What a page keeps (per tab) to re-attach to the same pty after a reload. */
export interface IRemembered {
  port: string;
  resume: string;
  info: ISerialPortInfo;
  options: ISerialOptions;
}

function storageKey(baseUrl: string): string {
  return `cgu-lab:serial:${baseUrl}`;
}

/** The port this tab had attached, if any. */
export function recall(baseUrl: string): IRemembered | null {
  try {
    const text = window.sessionStorage.getItem(storageKey(baseUrl));
    const value = text ? JSON.parse(text) : null;
    return value && typeof value.port === 'string' ? value : null;
  } catch {
    return null;
  }
}

export function remember(baseUrl: string, value: IRemembered | null): void {
  try {
    if (value) {
      window.sessionStorage.setItem(storageKey(baseUrl), JSON.stringify(value));
    } else {
      window.sessionStorage.removeItem(storageKey(baseUrl));
    }
  } catch {
    // Storage refused (private mode): a reload then asks for the port again.
  }
}

/** The two lines to paste into a notebook. */
export function pythonSnippet(
  path: string,
  rfc2217: string,
  baudRate: number
): string {
  return (
    'import serial\n' +
    `ser = serial.Serial(${JSON.stringify(path)}, ${baudRate}, timeout=1)\n` +
    `# DTR/RTS, break, parity: serial.serial_for_url(${JSON.stringify(rfc2217)})`
  );
}
