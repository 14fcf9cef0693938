/**
 * The Serial dialog: choose a device with the browser's own chooser
 * (`navigator.serial.requestPort`), set the line, connect; once connected,
 * where the device is in the notebook, its counters and Disconnect. Browsers
 * without Web Serial are told which browsers have it.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { CguDialog, markAcceptButton } from '../dialog';
import { h, replaceChildren } from '../dom';
import { SerialConnection } from './connection';
import {
  BAUD_RATES,
  countersText,
  fullOptions,
  optionsText,
  portLabel,
  pythonSnippet,
  unsupportedMessage
} from './format';
import { SerialManager } from './manager';
import { ISerialOptions, ISerialPort, webSerial } from './webSerial';

type Choice = [string, string];

function select(
  landmark: string,
  choices: Choice[],
  value: string
): HTMLSelectElement {
  return h(
    'select',
    { class: 'jp-mod-styled', 'data-cgu': landmark },
    ...choices.map(([v, label]) =>
      h('option', { value: v, selected: v === value }, label)
    )
  );
}

/** A label and its control: two cells of a `grid()`. */
function field(label: string, control: HTMLElement): HTMLElement {
  return h(
    'label',
    { class: 'cgu-SerialField', style: 'display:contents' },
    h('span', {}, label),
    control
  );
}

/** Labels in one column, controls in the other. */
function grid(...fields: HTMLElement[]): HTMLElement {
  return h(
    'div',
    {
      style:
        'display:grid;grid-template-columns:max-content minmax(14em,1fr);gap:8px 16px;align-items:center;margin:8px 0'
    },
    ...fields
  );
}

function parityChoices(trans: TranslationBundle): Choice[] {
  return [
    ['none', trans.__('none')],
    ['even', trans.__('even')],
    ['odd', trans.__('odd')]
  ];
}

function flowChoices(trans: TranslationBundle): Choice[] {
  return [
    ['none', trans.__('none')],
    ['hardware', trans.__('hardware (RTS/CTS)')]
  ];
}

/** The form: a device, its line settings, and a place for what went wrong. */
export class SerialForm extends Widget {
  constructor(
    private readonly trans: TranslationBundle,
    defaults: ISerialOptions
  ) {
    super();
    const o = fullOptions(defaults);
    this.addClass('cgu-SerialForm');
    this.deviceLabel = h(
      'span',
      { 'data-cgu': 'serial-device' },
      trans.__('none chosen')
    );
    this.baud = h('input', {
      type: 'number',
      min: 1,
      step: 1,
      list: 'cgu-serial-rates',
      value: o.baudRate,
      class: 'jp-mod-styled',
      'data-cgu': 'serial-baud'
    });
    this.dataBits = select(
      'serial-data-bits',
      [
        ['8', '8'],
        ['7', '7']
      ],
      String(o.dataBits)
    );
    this.parity = select('serial-parity', parityChoices(trans), o.parity);
    this.stopBits = select(
      'serial-stop-bits',
      [
        ['1', '1'],
        ['2', '2']
      ],
      String(o.stopBits)
    );
    this.flow = select('serial-flow', flowChoices(trans), o.flowControl);
    this.error = h('p', {
      class: 'cgu-SerialError',
      role: 'alert',
      'data-cgu': 'serial-error'
    });
    this.node.append(...this.formChildren());
  }

  /** The sentence, the fields, the baud rates offered and the error. */
  private formChildren(): HTMLElement[] {
    const trans = this.trans;
    return [
      h(
        'p',
        {},
        trans.__(
          'Plug the board into this computer, choose it, and it appears in the notebook as a serial port.'
        )
      ),
      grid(
        field(trans.__('Device'), this.deviceControl()),
        field(trans.__('Baud rate'), this.baud),
        field(trans.__('Data bits'), this.dataBits),
        field(trans.__('Parity'), this.parity),
        field(trans.__('Stop bits'), this.stopBits),
        field(trans.__('Flow control'), this.flow)
      ),
      h(
        'datalist',
        { id: 'cgu-serial-rates' },
        ...BAUD_RATES.map(rate => h('option', { value: rate }))
      ),
      this.error
    ];
  }

  /** The chosen device's name and the button that opens the browser's chooser. */
  private deviceControl(): HTMLElement {
    return h(
      'span',
      {},
      this.deviceLabel,
      ' ',
      h(
        'button',
        {
          type: 'button',
          class: 'jp-mod-styled jp-mod-reject',
          'data-cgu': 'serial-choose',
          onclick: () => void this.chooseDevice()
        },
        this.trans.__('Choose device…')
      )
    );
  }

  /** The device chosen so far. */
  chosen: ISerialPort | null = null;

  /** The browser's port chooser; null when the user closed it. */
  async chooseDevice(): Promise<ISerialPort | null> {
    const serial = webSerial();
    if (!serial) {
      return null;
    }
    try {
      this.chosen = await serial.requestPort();
    } catch (error) {
      if ((error as Error).name !== 'NotFoundError') {
        this.showError((error as Error).message);
      }
      return null;
    }
    this.deviceLabel.textContent = portLabel(this.chosen.getInfo(), this.trans);
    this.showError(null);
    return this.chosen;
  }

  /** The line settings, or a sentence saying what is wrong with them. */
  options(): ISerialOptions | string {
    const baudRate = Number(this.baud.value);
    if (!Number.isInteger(baudRate) || baudRate <= 0) {
      return this.trans.__(
        'The baud rate must be a whole number, such as 115200.'
      );
    }
    return {
      baudRate,
      dataBits: Number(this.dataBits.value) as 7 | 8,
      stopBits: Number(this.stopBits.value) as 1 | 2,
      parity: this.parity.value as 'none' | 'even' | 'odd',
      flowControl: this.flow.value as 'none' | 'hardware'
    };
  }

  showError(message: string | null): void {
    this.error.textContent = message ?? '';
  }

  private readonly deviceLabel: HTMLSpanElement;
  private readonly baud: HTMLInputElement;
  private readonly dataBits: HTMLSelectElement;
  private readonly parity: HTMLSelectElement;
  private readonly stopBits: HTMLSelectElement;
  private readonly flow: HTMLSelectElement;
  private readonly error: HTMLParagraphElement;
}

/** What is attached, where the notebook finds it, and its counters (live). */
export class SerialAttachedView extends Widget {
  constructor(
    private readonly connection: SerialConnection,
    private readonly trans: TranslationBundle
  ) {
    super();
    this.addClass('cgu-SerialAttached');
    this.node.dataset.cgu = 'serial-attached';
    connection.changed.connect(this.render, this);
    this.render();
  }

  dispose(): void {
    this.connection.changed.disconnect(this.render, this);
    super.dispose();
  }

  private render(): void {
    const c = this.connection;
    const a = c.attached;
    const trans = this.trans;
    const state =
      c.state === 'reconnecting'
        ? trans.__('reconnecting to the notebook…')
        : trans.__('attached');
    replaceChildren(
      this.node,
      h('p', {}, h('strong', {}, portLabel(c.info, trans)), ` — ${state}`),
      a
        ? h(
            'div',
            {},
            grid(
              field(
                trans.__('In the notebook'),
                h('code', { 'data-cgu': 'serial-path' }, a.path)
              ),
              field(
                trans.__('RFC 2217'),
                h('code', { 'data-cgu': 'serial-rfc2217' }, a.rfc2217)
              ),
              field(
                trans.__('Line'),
                h('span', {}, optionsText(c.options, trans))
              ),
              field(
                trans.__('Bytes'),
                h(
                  'span',
                  { 'data-cgu': 'serial-counters' },
                  countersText(c.toDevice, c.fromDevice)
                )
              )
            ),
            h('p', {}, trans.__('In a cell:')),
            h(
              'pre',
              { 'data-cgu': 'serial-snippet' },
              pythonSnippet(a.path, a.rfc2217, c.options.baudRate)
            )
          )
        : null
    );
  }
}

/** Open the Serial dialog for this page's manager. */
export async function openSerialDialog(
  manager: SerialManager,
  trans: TranslationBundle,
  defaults: ISerialOptions
): Promise<void> {
  const title = trans.__('Serial device');
  if (!webSerial()) {
    await showUnsupported(title, trans);
    return;
  }
  const connection = manager.connection;
  if (connection) {
    await showAttached(manager, connection, title, trans);
    return;
  }
  await showConnectForm(manager, title, trans, defaults);
}

/** Tell a browser without Web Serial which browsers have it. */
async function showUnsupported(
  title: string,
  trans: TranslationBundle
): Promise<void> {
  const body = h('p', { 'data-cgu': 'serial-unsupported' });
  body.textContent = unsupportedMessage(trans, window.isSecureContext);
  await showDialog({
    title,
    body: new Widget({ node: body }),
    buttons: [Dialog.okButton({ label: trans.__('Close') })]
  });
}

/** Show the attached device, with Disconnect. */
async function showAttached(
  manager: SerialManager,
  connection: SerialConnection,
  title: string,
  trans: TranslationBundle
): Promise<void> {
  const view = new SerialAttachedView(connection, trans);
  const result = await showDialog({
    title,
    body: view,
    buttons: [
      Dialog.cancelButton({ label: trans.__('Close') }),
      Dialog.warnButton({ label: trans.__('Disconnect') })
    ],
    defaultButton: 0 // Enter closes; disconnecting takes a click
  });
  view.dispose();
  if (result.button.accept) {
    await manager.disconnect();
  }
}

/** The form to choose a device and connect; stays open until it connects. */
async function showConnectForm(
  manager: SerialManager,
  title: string,
  trans: TranslationBundle,
  defaults: ISerialOptions
): Promise<void> {
  const form = new SerialForm(trans, defaults);
  const dialog = new CguDialog<void>({
    title,
    body: form,
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.okButton({ label: trans.__('Connect') })
    ],
    onAccept: () => connectFromForm(manager, form, trans)
  });
  dialog.addClass('cgu-SerialDialog');
  dialog.node.dataset.cgu = 'serial-dialog';
  markAcceptButton(dialog, 'serial-connect');
  await dialog.launch();
}

/** Connect the form's device with its line; false (the error shown) when it cannot. */
async function connectFromForm(
  manager: SerialManager,
  form: SerialForm,
  trans: TranslationBundle
): Promise<boolean> {
  const port = form.chosen ?? (await form.chooseDevice());
  if (!port) {
    form.showError(trans.__('Choose a device first.'));
    return false;
  }
  const options = form.options();
  if (typeof options === 'string') {
    form.showError(options);
    return false;
  }
  try {
    await manager.connect(port, options);
  } catch (error) {
    form.showError(trans.__('Could not connect: %1', (error as Error).message));
    return false;
  }
  return true;
}
