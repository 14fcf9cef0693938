/**
 * The Serial dialog: choose a device with the browser's own chooser
 * (`navigator.serial.requestPort`), set the line, connect; once connected,
 * where the device is in the notebook, its counters and Disconnect. Browsers
 * without Web Serial are told which browsers have it.
 *
 * JupyterLab's Dialog with ReactWidget bodies: the form's state is a
 * `SerialFormModel` (model.ts); the attached view renders the connection.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';
import { CguDialog, markAcceptButton } from '../dialog';
import { FormError, useSignal } from '../formParts';
import { useModel } from '../useModel';
import { SerialConnection } from './connection';
import {
  BAUD_RATES,
  countersText,
  optionsText,
  portLabel,
  pythonSnippet,
  unsupportedMessage
} from './format';
import { SerialManager } from './manager';
import { ISerialFields, SerialFormModel } from './model';
import { ISerial, ISerialOptions, webSerial } from './webSerial';

type Choice = [string, string];

/** A label and its control: two cells of a `cgu-SerialGrid`. */
function GridField(props: {
  label: string;
  children: React.ReactNode;
}): JSX.Element {
  return (
    <label className="cgu-SerialField">
      <span>{props.label}</span>
      {props.children}
    </label>
  );
}

/** A select of the form bound to one of its fields. */
function FieldSelect(props: {
  model: SerialFormModel;
  name: keyof ISerialFields;
  landmark: string;
  choices: Choice[];
}): JSX.Element {
  const { model, name } = props;
  return (
    <select
      className="jp-mod-styled"
      data-cgu={props.landmark}
      value={model.fields[name]}
      onChange={event => model.setField(name, event.currentTarget.value)}
    >
      {props.choices.map(([value, label]) => (
        <option key={value} value={value}>
          {label}
        </option>
      ))}
    </select>
  );
}

/** The form: a device, its line settings, and a place for what went wrong. */
export function SerialFormView(props: { model: SerialFormModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const { trans, fields } = model;
  const rates = React.useId();
  return (
    <>
      <p>
        {trans.__(
          'Plug the board into this computer, choose it, and it appears in the notebook as a serial port.'
        )}
      </p>
      <div className="cgu-SerialGrid">
        <GridField label={trans.__('Device')}>
          <span>
            <span data-cgu="serial-device">{model.deviceLabel}</span>{' '}
            <button
              type="button"
              className="jp-mod-styled jp-mod-reject"
              data-cgu="serial-choose"
              onClick={() => void model.chooseDevice()}
            >
              {trans.__('Choose device…')}
            </button>
          </span>
        </GridField>
        <GridField label={trans.__('Baud rate')}>
          <input
            type="number"
            min={1}
            step={1}
            list={rates}
            value={fields.baudRate}
            className="jp-mod-styled"
            data-cgu="serial-baud"
            onChange={event =>
              model.setField('baudRate', event.currentTarget.value)
            }
          />
        </GridField>
        <GridField label={trans.__('Data bits')}>
          <FieldSelect
            model={model}
            name="dataBits"
            landmark="serial-data-bits"
            choices={[
              ['8', '8'],
              ['7', '7']
            ]}
          />
        </GridField>
        <GridField label={trans.__('Parity')}>
          <FieldSelect
            model={model}
            name="parity"
            landmark="serial-parity"
            choices={[
              ['none', trans.__('none')],
              ['even', trans.__('even')],
              ['odd', trans.__('odd')]
            ]}
          />
        </GridField>
        <GridField label={trans.__('Stop bits')}>
          <FieldSelect
            model={model}
            name="stopBits"
            landmark="serial-stop-bits"
            choices={[
              ['1', '1'],
              ['2', '2']
            ]}
          />
        </GridField>
        <GridField label={trans.__('Flow control')}>
          <FieldSelect
            model={model}
            name="flowControl"
            landmark="serial-flow"
            choices={[
              ['none', trans.__('none')],
              ['hardware', trans.__('hardware (RTS/CTS)')]
            ]}
          />
        </GridField>
      </div>
      <datalist id={rates}>
        {BAUD_RATES.map(rate => (
          <option key={rate} value={rate} />
        ))}
      </datalist>
      <FormError
        message={model.error}
        className="cgu-SerialError"
        dataCgu="serial-error"
      />
    </>
  );
}

/** The body of the connect dialog. */
export class SerialForm extends ReactWidget {
  constructor(
    trans: TranslationBundle,
    defaults: ISerialOptions,
    serial: () => ISerial | null = webSerial
  ) {
    super();
    this.model = new SerialFormModel(trans, defaults, serial);
    this.addClass('cgu-SerialForm');
  }

  /** The form's state. */
  readonly model: SerialFormModel;

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    super.dispose();
  }

  protected render(): JSX.Element {
    return <SerialFormView model={this.model} />;
  }
}

/** What is attached, where the notebook finds it, and its counters (live). */
export function SerialAttached(props: {
  connection: SerialConnection;
  trans: TranslationBundle;
}): JSX.Element {
  const { connection: c, trans } = props;
  useSignal(c.changed);
  const a = c.attached;
  const state =
    c.state === 'reconnecting'
      ? trans.__('reconnecting to the notebook…')
      : trans.__('attached');
  return (
    <>
      <p>
        <strong>{portLabel(c.info, trans)}</strong>
        {` — ${state}`}
      </p>
      {a ? (
        <div>
          <div className="cgu-SerialGrid">
            <GridField label={trans.__('In the notebook')}>
              <code data-cgu="serial-path">{a.path}</code>
            </GridField>
            <GridField label={trans.__('RFC 2217')}>
              <code data-cgu="serial-rfc2217">{a.rfc2217}</code>
            </GridField>
            <GridField label={trans.__('Line')}>
              <span>{optionsText(c.options, trans)}</span>
            </GridField>
            <GridField label={trans.__('Bytes')}>
              <span data-cgu="serial-counters">
                {countersText(c.toDevice, c.fromDevice)}
              </span>
            </GridField>
          </div>
          <p>{trans.__('In a cell:')}</p>
          <pre data-cgu="serial-snippet">
            {pythonSnippet(a.path, a.rfc2217, c.options.baudRate)}
          </pre>
        </div>
      ) : null}
    </>
  );
}

/** The body of the dialog of an attached device. */
export class SerialAttachedView extends ReactWidget {
  constructor(
    private readonly connection: SerialConnection,
    private readonly trans: TranslationBundle
  ) {
    super();
    this.addClass('cgu-SerialAttached');
    this.node.dataset.cgu = 'serial-attached';
  }

  protected render(): JSX.Element {
    return <SerialAttached connection={this.connection} trans={this.trans} />;
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
  const body = (
    <p data-cgu="serial-unsupported">
      {unsupportedMessage(trans, window.isSecureContext)}
    </p>
  );
  await showDialog({
    title,
    body,
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
    onAccept: () => connectFromForm(manager, form.model)
  });
  dialog.addClass('cgu-SerialDialog');
  dialog.node.dataset.cgu = 'serial-dialog';
  markAcceptButton(dialog, 'serial-connect');
  try {
    await dialog.launch();
  } finally {
    dialog.dispose();
  }
}

/** Connect the form's device with its line; false (the error shown) when it cannot. */
export async function connectFromForm(
  manager: Pick<SerialManager, 'connect'>,
  model: SerialFormModel
): Promise<boolean> {
  const trans = model.trans;
  const port = model.chosen ?? (await model.chooseDevice());
  if (!port) {
    model.setError(trans.__('Choose a device first.'));
    return false;
  }
  const options = model.options();
  if (typeof options === 'string') {
    model.setError(options);
    return false;
  }
  try {
    await manager.connect(port, options);
  } catch (error) {
    model.setError(trans.__('Could not connect: %1', (error as Error).message));
    return false;
  }
  return true;
}
