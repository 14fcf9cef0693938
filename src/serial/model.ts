/**
 * The Serial form's state: the device chosen with the browser's chooser, the
 * line settings as typed, and the form's problem. No DOM: the dialog's
 * components render it and the tests drive it.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { DialogFormModel } from '../formParts';
import { fullOptions, portLabel } from './format';
import { ISerial, ISerialOptions, ISerialPort, webSerial } from './webSerial';

/** The line settings as the form holds them (the inputs' values). */
export interface ISerialFields {
  baudRate: string;
  dataBits: string;
  parity: string;
  stopBits: string;
  flowControl: string;
}

export class SerialFormModel extends DialogFormModel {
  constructor(
    readonly trans: TranslationBundle,
    defaults: ISerialOptions,
    /** `navigator.serial`; replaceable in tests. */
    private readonly _serial: () => ISerial | null = webSerial
  ) {
    super();
    const o = fullOptions(defaults);
    this._fields = {
      baudRate: String(o.baudRate),
      dataBits: String(o.dataBits),
      parity: o.parity,
      stopBits: String(o.stopBits),
      flowControl: o.flowControl
    };
  }

  /** The line settings as typed. */
  get fields(): Readonly<ISerialFields> {
    return this._fields;
  }

  /** The device chosen so far. */
  get chosen(): ISerialPort | null {
    return this._chosen;
  }

  /** The chosen device's name, or "none chosen". */
  get deviceLabel(): string {
    return this._chosen
      ? portLabel(this._chosen.getInfo(), this.trans)
      : this.trans.__('none chosen');
  }

  setField(name: keyof ISerialFields, value: string): void {
    this._fields = { ...this._fields, [name]: value };
    this.emit();
  }

  /** The browser's port chooser; null when the user closed it. */
  async chooseDevice(): Promise<ISerialPort | null> {
    const serial = this._serial();
    if (!serial) {
      return null;
    }
    try {
      this._chosen = await serial.requestPort();
    } catch (error) {
      if ((error as Error).name !== 'NotFoundError') {
        this.setError((error as Error).message);
      }
      return null;
    }
    this.setError(null);
    return this._chosen;
  }

  /** The line settings, or a sentence saying what is wrong with them. */
  options(): ISerialOptions | string {
    const f = this._fields;
    const baudRate = Number(f.baudRate);
    if (!Number.isInteger(baudRate) || baudRate <= 0) {
      return this.trans.__(
        'The baud rate must be a whole number, such as 115200.'
      );
    }
    return {
      baudRate,
      dataBits: Number(f.dataBits) as 7 | 8,
      stopBits: Number(f.stopBits) as 1 | 2,
      parity: f.parity as 'none' | 'even' | 'odd',
      flowControl: f.flowControl as 'none' | 'hardware'
    };
  }

  private _fields: ISerialFields;
  private _chosen: ISerialPort | null = null;
}
