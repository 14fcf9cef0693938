/**
 * Resources: the Resize dialog (owner only).
 */
import { Dialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { CguAPI } from '../api';
import { openFormDialog } from '../dialog';
import { Attributes, h, replaceChildren, uniqueId } from '../dom';
import { formatNumber } from '../format';
import { restartTarget } from '../platform/format';
import { requestedText } from './format';
import {
  gpuTypeChoices,
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

/* ------------------------------------------------------------------ resize */

/** A labelled field of the Resize dialog, with an optional note. */
function field(
  label: string,
  input: HTMLInputElement | HTMLSelectElement,
  note?: string
): HTMLElement {
  const noteId = note ? uniqueId('cgu-resize-note') : null;
  if (noteId) {
    input.setAttribute('aria-describedby', noteId);
  }
  return h(
    'div',
    { class: 'cgu-Resize-field' },
    h('label', { for: input.id }, label),
    input,
    note ? h('span', { id: noteId, class: 'cgu-Resize-note' }, note) : null
  );
}

/** A number input of the Resize dialog named `resize-<name>`. */
function numberInput(name: string, attributes: Attributes): HTMLInputElement {
  return h('input', {
    type: 'number',
    id: uniqueId(`cgu-resize-${name}`),
    class: 'jp-mod-styled',
    ...attributes,
    'data-cgu': `resize-${name}`
  });
}

/** The GPU type choice, the notebook's own type included even when no longer offered. */
function gpuTypeSelect(
  quota: IQuota,
  form: IResizeForm,
  trans: TranslationBundle,
  onchange: () => void
): HTMLSelectElement {
  const choices = gpuTypeChoices(quota, trans);
  if (form.gpuType && !choices.some(c => c.value === form.gpuType)) {
    // The notebook's type is no longer offered: keep it choosable.
    choices.push({ value: form.gpuType, label: form.gpuType, allowed: true });
  }
  return h(
    'select',
    {
      id: uniqueId('cgu-resize-gpu-type'),
      class: 'jp-mod-styled',
      'data-cgu': 'resize-gpu-type',
      onchange
    },
    ...choices.map(choice =>
      h(
        'option',
        {
          value: choice.value,
          selected: choice.value === form.gpuType,
          disabled: !choice.allowed && choice.value !== form.gpuType
        },
        choice.label
      )
    )
  );
}

/** The body of the Resize dialog. */
export class ResizeBody
  extends Widget
  implements Dialog.IBodyWidget<IResizeForm>
{
  constructor(quota: IQuota, resources: IResources, trans: TranslationBundle) {
    super();
    this.addClass('cgu-Resize');
    this.node.dataset.cgu = 'resize-dialog';
    const form = resizeFormFrom(resources.requested);
    this._cpus = numberInput('cpus', {
      min: 0.1,
      step: 'any',
      value: formatNumber(form.cpus, 3)
    });
    this._memory = numberInput('memory', {
      min: 0.1,
      step: 'any',
      value: formatNumber(form.memoryGiB, 3)
    });
    this._gpuType = gpuTypeSelect(quota, form, trans, () =>
      this._onGpuTypeChange()
    );
    this._gpus = numberInput('gpus', {
      min: 0,
      step: 1,
      value: form.gpus,
      disabled: !form.gpuType
    });
    this._error = h('div', {
      class: 'cgu-Resize-error',
      role: 'alert',
      'data-cgu': 'resize-error',
      hidden: true
    });
    replaceChildren(this.node, ...this._children(quota, resources, trans));
  }

  /** The warning, the quota, the current size, the fields and the error. */
  private _children(
    quota: IQuota,
    resources: IResources,
    trans: TranslationBundle
  ): HTMLElement[] {
    return [
      h(
        'p',
        { class: 'cgu-Resize-warning' },
        trans.__(
          'Resizing restarts this notebook server: running kernels stop and unsaved changes are lost. Save your work first.'
        )
      ),
      h(
        'div',
        { class: 'cgu-Resize-quota', 'data-cgu': 'resize-quota' },
        h('h3', {}, trans.__('Your quota and current use')),
        h('ul', {}, ...quotaLines(quota, trans).map(line => h('li', {}, line)))
      ),
      h(
        'p',
        { class: 'cgu-Resize-now' },
        trans.__('Now: %1.', requestedText(resources, trans))
      ),
      field(trans.__('CPUs'), this._cpus, trans.__('e.g. 2 or 0.5')),
      field(trans.__('Memory (GiB)'), this._memory, trans.__('e.g. 4 or 0.5')),
      field(trans.__('GPU type'), this._gpuType),
      field(
        trans.__('GPUs'),
        this._gpus,
        trans.__('how many GPUs of that type')
      ),
      this._error
    ];
  }

  /** The form's values. */
  getValue(): IResizeForm {
    return {
      cpus: parseFloat(this._cpus.value),
      memoryGiB: parseFloat(this._memory.value),
      gpuType: this._gpuType.value,
      gpus: this._gpuType.value ? Number(this._gpus.value) : 0
    };
  }

  /** Show a message (from validation or the server) inside the dialog. */
  showError(message: string | null): void {
    this._error.textContent = message ?? '';
    this._error.hidden = !message;
  }

  private _onGpuTypeChange(): void {
    const type = this._gpuType.value;
    this._gpus.disabled = !type;
    if (!type) {
      this._gpus.value = '0';
    } else if (Number(this._gpus.value) < 1) {
      this._gpus.value = '1';
    }
  }

  private _cpus: HTMLInputElement;
  private _memory: HTMLInputElement;
  private _gpuType: HTMLSelectElement;
  private _gpus: HTMLInputElement;
  private _error: HTMLElement;
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
