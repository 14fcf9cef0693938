/**
 * The part of the Web Serial API the bridge uses, typed here because
 * TypeScript's DOM library does not have it (Chromium-only), the messages
 * of the serial channel to the server extension
 * (cgu_lab/notebook/serial/handlers.py describes them), and the types of a
 * connection (connection.ts).
 */

/** `SerialOptions` of `port.open()`; the server sends settings in this shape. */
export interface ISerialOptions {
  baudRate: number;
  dataBits?: 7 | 8;
  stopBits?: 1 | 2;
  parity?: 'none' | 'even' | 'odd';
  flowControl?: 'none' | 'hardware';
  bufferSize?: number;
}

/** `port.setSignals()`. */
export interface ISerialOutputSignals {
  dataTerminalReady?: boolean;
  requestToSend?: boolean;
  break?: boolean;
}

/** `port.getSignals()`. */
export interface ISerialInputSignals {
  dataCarrierDetect: boolean;
  clearToSend: boolean;
  ringIndicator: boolean;
  dataSetReady: boolean;
}

/** `port.getInfo()`. */
export interface ISerialPortInfo {
  usbVendorId?: number;
  usbProductId?: number;
  bluetoothServiceClassId?: number | string;
}

/** A `SerialPort`. */
export interface ISerialPort extends EventTarget {
  readonly readable: ReadableStream<Uint8Array> | null;
  readonly writable: WritableStream<Uint8Array> | null;
  open(options: ISerialOptions): Promise<void>;
  close(): Promise<void>;
  getInfo(): ISerialPortInfo;
  setSignals(signals: ISerialOutputSignals): Promise<void>;
  getSignals(): Promise<ISerialInputSignals>;
}

/** `navigator.serial`. */
export interface ISerial extends EventTarget {
  requestPort(options?: {
    filters?: Array<Partial<ISerialPortInfo>>;
  }): Promise<ISerialPort>;
  getPorts(): Promise<ISerialPort[]>;
}

/** `navigator.serial`, or null in browsers without it (Firefox, Safari, or not HTTPS). */
export function webSerial(): ISerial | null {
  const serial = (navigator as unknown as { serial?: ISerial }).serial;
  return serial && typeof serial.requestPort === 'function' ? serial : null;
}

/** What the server sends about the port once attached. */
export interface IAttached {
  type: 'attached';
  name: string;
  path: string;
  device: string;
  rfc2217: string;
  resume: string;
  resumed: boolean;
  window: number;
  settings: ISerialOptions;
  signals: { dtr: boolean; rts: boolean; break: boolean };
}

/** Control messages from the server (binary messages are the device's bytes). */
export type ServerMessage =
  | IAttached
  | { type: 'ack'; bytes: number }
  | { type: 'settings'; settings: ISerialOptions }
  | { type: 'signals'; dtr: boolean; rts: boolean; break: boolean }
  | { type: 'closed'; reason: string }
  | { type: 'error'; message: string };

/** Where the connection is. */
export type ConnectionState =
  'connecting' | 'attached' | 'reconnecting' | 'closed';

/** Why a connection ended, for the user (plugin.ts says it in words). */
export type EndReason =
  | 'disconnected'
  | 'unplugged'
  | 'device-lost'
  | 'taken-over'
  | 'server-closed'
  | 'lost';

export interface IConnectionOptions {
  port: ISerialPort;
  info: ISerialPortInfo;
  options: ISerialOptions;
  /** The channel's websocket URL (with the token where the server wants one). */
  url: string;
  /** How long to keep re-opening a dropped websocket (the server's grace). */
  retryMs: number;
  /** The port this page had before a reload. */
  resume?: { port: string; resume: string } | null;
}
