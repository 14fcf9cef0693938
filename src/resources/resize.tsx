/**
 * Resources: the Resize dialog (owner only). JupyterLab's Dialog with a
 * ReactWidget body whose state is a `ResizeModel`; the rules are the pure
 * helpers of quota.ts.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';
import { CguAPI } from '../api';
import { IFormBody, openFormDialog } from '../dialog';
import { formatNumber } from '../format';
import { AmountInput, DialogFormModel, Field, FormError } from '../formParts';
import { restartTarget } from '../platform/format';
import { useModel } from '../useModel';
import { requestedText } from './format';
import {
  gpuCountFor,
  gpuTypeChoices,
  IGpuTypeChoice,
  IResizeForm,
  quotaLines,
  resizeFormFrom,
  resizeRequest,
  validateResize
} from './quota';
import {
  IQuota,
  IResizeRequest,
  IResizeResponse,
  IResources
} from '../apiTypes';

/** The Resize form's state: the inputs as typed and the form's problem. */
export class ResizeModel extends DialogFormModel {
  constructor(
    readonly quota: IQuota,
    readonly resources: IResources,
    readonly trans: TranslationBundle
  ) {
    super();
    const form = resizeFormFrom(resources.requested);
    this._fields = {
      cpus: formatNumber(form.cpus, 3),
      memoryGiB: formatNumber(form.memoryGiB, 3),
      gpuType: form.gpuType,
      gpus: String(form.gpus)
    };
    this.initialGpuType = form.gpuType;
  }

  /** The notebook's GPU type when the dialog opened. */
  readonly initialGpuType: string;

  get fields(): Readonly<IResizeFields> {
    return this._fields;
  }

  /** The GPU types to choose from; the notebook's own stays choosable. */
  get gpuTypeChoices(): IGpuTypeChoice[] {
    const choices = gpuTypeChoices(this.quota, this.trans);
    const own = this.initialGpuType;
    if (own && !choices.some(c => c.value === own)) {
      // The notebook's type is no longer offered: keep it choosable.
      choices.push({ value: own, label: own, allowed: true });
    }
    return choices;
  }

  setField(name: 'cpus' | 'memoryGiB' | 'gpus', value: string): void {
    this._fields = { ...this._fields, [name]: value };
    this.emit();
  }

  /** No GPU type means no GPUs; a GPU type means at least one. */
  setGpuType(gpuType: string): void {
    this._fields = {
      ...this._fields,
      gpuType,
      gpus: gpuCountFor(gpuType, this._fields.gpus)
    };
    this.emit();
  }

  /** The form's values. */
  value(): IResizeForm {
    const f = this._fields;
    return {
      cpus: parseFloat(f.cpus),
      memoryGiB: parseFloat(f.memoryGiB),
      gpuType: f.gpuType,
      gpus: f.gpuType ? Number(f.gpus) : 0
    };
  }

  private _fields: IResizeFields;
}

/** The Resize form's inputs as typed. */
export interface IResizeFields {
  cpus: string;
  memoryGiB: string;
  gpuType: string;
  gpus: string;
}

/** The warning, the quota, the current size, the fields and the error. */
export function ResizeForm(props: { model: ResizeModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const { trans, fields } = model;
  const field = { className: 'cgu-Resize-field', noteClass: 'cgu-Resize-note' };
  return (
    <>
      <p className="cgu-Resize-warning">
        {trans.__(
          'Resizing restarts this notebook server: running kernels stop and unsaved changes are lost. Save your work first.'
        )}
      </p>
      <div className="cgu-Resize-quota" data-cgu="resize-quota">
        <h3>{trans.__('Your quota and current use')}</h3>
        <ul>
          {quotaLines(model.quota, trans).map((line, i) => (
            <li key={i}>{line}</li>
          ))}
        </ul>
      </div>
      <p className="cgu-Resize-now">
        {trans.__('Now: %1.', requestedText(model.resources, trans))}
      </p>
      <Field
        {...field}
        label={trans.__('CPUs')}
        note={trans.__('e.g. 2 or 0.5')}
      >
        {(id, describedBy) => (
          <AmountInput
            model={model}
            what="cpus"
            dataCgu="resize-cpus"
            id={id}
            describedBy={describedBy}
            min={0.1}
            step="any"
          />
        )}
      </Field>
      <Field
        {...field}
        label={trans.__('Memory (GiB)')}
        note={trans.__('e.g. 4 or 0.5')}
      >
        {(id, describedBy) => (
          <AmountInput
            model={model}
            what="memoryGiB"
            dataCgu="resize-memory"
            id={id}
            describedBy={describedBy}
            min={0.1}
            step="any"
          />
        )}
      </Field>
      <Field {...field} label={trans.__('GPU type')}>
        {id => (
          <select
            id={id}
            className="jp-mod-styled"
            data-cgu="resize-gpu-type"
            value={fields.gpuType}
            onChange={event => model.setGpuType(event.currentTarget.value)}
          >
            {model.gpuTypeChoices.map(choice => (
              <option
                key={choice.value}
                value={choice.value}
                disabled={
                  !choice.allowed && choice.value !== model.initialGpuType
                }
              >
                {choice.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        {...field}
        label={trans.__('GPUs')}
        note={trans.__('how many GPUs of that type')}
      >
        {(id, describedBy) => (
          <AmountInput
            model={model}
            what="gpus"
            dataCgu="resize-gpus"
            id={id}
            describedBy={describedBy}
            min={0}
            step={1}
            disabled={!fields.gpuType}
          />
        )}
      </Field>
      <FormError
        message={model.error}
        className="cgu-Resize-error"
        dataCgu="resize-error"
      />
    </>
  );
}

/** The body of the Resize dialog. */
export class ResizeBody extends ReactWidget implements IFormBody<IResizeForm> {
  constructor(quota: IQuota, resources: IResources, trans: TranslationBundle) {
    super();
    this.addClass('cgu-Resize');
    this.node.dataset.cgu = 'resize-dialog';
    this.model = new ResizeModel(quota, resources, trans);
  }

  /** The form's state. */
  readonly model: ResizeModel;

  /** The form's values. */
  getValue(): IResizeForm {
    return this.model.value();
  }

  /** Show a message (from validation or the server) inside the dialog. */
  showError(message: string | null): void {
    this.model.setError(message);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    super.dispose();
  }

  protected render(): JSX.Element {
    return <ResizeForm model={this.model} />;
  }
}

/** What the Resize dialog needs. */
export interface IResizeDialogOptions {
  quota: IQuota;
  resources: IResources;
  resize?: (body: IResizeRequest) => Promise<IResizeResponse>;
  /** Called with the restart page once the server accepted the request. */
  onAccepted: (response: IResizeResponse, target: string | null) => void;
  trans: TranslationBundle;
}

/** Open the Resize dialog; resolves true when a resize was accepted. */
export async function openResizeDialog(
  options: IResizeDialogOptions
): Promise<boolean> {
  const resize = options.resize ?? CguAPI.resize;
  const trans = options.trans;
  const response = await openFormDialog({
    title: trans.__('Resize this notebook'),
    body: new ResizeBody(options.quota, options.resources, trans),
    acceptLabel: trans.__('Resize and restart'),
    focusNodeSelector: '[data-cgu="resize-cpus"]',
    className: 'cgu-ResizeDialog',
    trans,
    validate: form => validateResize(form, trans),
    send: form => resize(resizeRequest(form)),
    onDone: accepted =>
      options.onAccepted(
        accepted,
        restartTarget(accepted.restart_url, window.location.href)
      )
  });
  return response !== null;
}
