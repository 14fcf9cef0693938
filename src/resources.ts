/**
 * Resources: a model that polls `GET resources` while someone looks at it,
 * the status-bar item, the Resources panel and the Resize dialog.
 */
import { Dialog } from '@jupyterlab/apputils';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import { CguAPI, errorMessage } from './api';
import { openFormDialog } from './dialog';
import { h, replaceChildren, uniqueId } from './dom';
import {
  cpuPercent,
  formatBytePair,
  formatBytes,
  formatCores,
  formatNumber,
  formatPercent,
  gpuLines,
  gpuTypeChoices,
  hasGpus,
  IResizeForm,
  percentOf,
  pollDelaySeconds,
  quotaLines,
  requestedText,
  resizeFormFrom,
  resizeRequest,
  restartTarget,
  statusBarText,
  statusBarTooltip,
  validateResize
} from './format';
import {
  IQuota,
  IResizeRequest,
  IResizeResponse,
  IResources,
  IResourcesModel
} from './tokens';

/* ------------------------------------------------------------------ model */

/**
 * Polls `GET resources` every `interval` seconds while at least one user
 * (the status-bar item, the panel) holds it and the page is visible; backs
 * off after failures.
 */
export class ResourcesModel implements IResourcesModel {
  constructor(
    options: {
      fetch?: () => Promise<IResources>;
      interval?: number;
    } = {}
  ) {
    this._fetch = options.fetch ?? CguAPI.resources;
    this._interval = options.interval ?? 5;
    document.addEventListener('visibilitychange', this._onVisibility);
  }

  get resources(): IResources | null {
    return this._resources;
  }

  get error(): string | null {
    return this._error;
  }

  get updatedAt(): Date | null {
    return this._updatedAt;
  }

  get changed(): ISignal<IResourcesModel, void> {
    return this._changed;
  }

  /** Seconds between refreshes (at least 1). */
  get interval(): number {
    return this._interval;
  }
  set interval(seconds: number) {
    this._interval = Math.max(1, Number.isFinite(seconds) ? seconds : 5);
    this._reschedule();
  }

  /**
   * Start receiving updates; call the returned function to stop. Polling runs
   * while anyone holds the model.
   */
  use(): () => void {
    this._users += 1;
    if (this._users === 1) {
      void this.refresh();
    }
    let released = false;
    return () => {
      if (!released) {
        released = true;
        this._users -= 1;
        this._reschedule();
      }
    };
  }

  async refresh(): Promise<void> {
    window.clearTimeout(this._timer);
    this._timer = 0;
    if (this._inFlight) {
      return this._inFlight;
    }
    this._inFlight = (async () => {
      try {
        this._resources = await this._fetch();
        this._error = null;
        this._failures = 0;
      } catch (error) {
        this._error = errorMessage(error);
        this._failures += 1;
      }
      this._updatedAt = new Date();
      this._inFlight = null;
      if (!this._disposed) {
        this._changed.emit();
        this._reschedule();
      }
    })();
    return this._inFlight;
  }

  dispose(): void {
    this._disposed = true;
    window.clearTimeout(this._timer);
    document.removeEventListener('visibilitychange', this._onVisibility);
    Signal.clearData(this);
  }

  private _reschedule(): void {
    window.clearTimeout(this._timer);
    this._timer = 0;
    if (this._disposed || this._users <= 0 || document.hidden) {
      return;
    }
    if (this._inFlight) {
      return; // it reschedules when it ends
    }
    const delay = pollDelaySeconds(this._interval, this._failures) * 1000;
    this._timer = window.setTimeout(() => void this.refresh(), delay);
  }

  private _onVisibility = (): void => {
    if (document.hidden) {
      window.clearTimeout(this._timer);
      this._timer = 0;
    } else if (this._users > 0) {
      void this.refresh();
    }
  };

  private _fetch: () => Promise<IResources>;
  private _interval: number;
  private _resources: IResources | null = null;
  private _error: string | null = null;
  private _updatedAt: Date | null = null;
  private _failures = 0;
  private _users = 0;
  private _timer = 0;
  private _inFlight: Promise<void> | null = null;
  private _disposed = false;
  private _changed = new Signal<IResourcesModel, void>(this);
}

/* -------------------------------------------------------------- status bar */

/**
 * A widget that holds the model (keeps it polling) only while it is attached
 * and visible.
 */
class ModelViewer extends Widget {
  constructor(protected readonly model: ResourcesModel) {
    super();
  }

  protected onAfterAttach(): void {
    this._hold(this.isVisible);
  }

  protected onAfterShow(): void {
    this._hold(this.isAttached);
  }

  protected onBeforeHide(): void {
    this._hold(false);
  }

  protected onBeforeDetach(): void {
    this._hold(false);
  }

  dispose(): void {
    this._hold(false);
    super.dispose();
  }

  private _hold(want: boolean): void {
    if (want && !this._release) {
      this._release = this.model.use();
    } else if (!want && this._release) {
      this._release();
      this._release = null;
    }
  }

  private _release: (() => void) | null = null;
}

/** The status-bar item: "CPU 12% · Mem 0.8/2.0 GiB · GPU 30%". */
export class ResourcesStatus extends ModelViewer {
  constructor(model: ResourcesModel, onClick: () => void) {
    super(model);
    this.addClass('cgu-ResourcesStatus');
    this._button = h(
      'button',
      {
        type: 'button',
        class: 'cgu-ResourcesStatus-button',
        'data-cgu': 'resources-status',
        onclick: onClick
      },
      'Resources…'
    );
    this.node.appendChild(this._button);
    model.changed.connect(this._update, this);
    this._update();
  }

  private _update(): void {
    const resources = this.model.resources;
    if (this.model.error && !resources) {
      this._button.textContent = 'Resources: unavailable';
      this._button.title = `${this.model.error}\nClick to open the Resources panel.`;
      this._button.classList.add('cgu-mod-error');
      return;
    }
    this._button.classList.toggle('cgu-mod-error', !!this.model.error);
    if (!resources) {
      return;
    }
    this._button.textContent = statusBarText(resources);
    this._button.title =
      statusBarTooltip(resources) +
      (this.model.error ? `\n(Last refresh failed: ${this.model.error})` : '');
  }

  private _button: HTMLButtonElement;
}

/* ------------------------------------------------------------------- panel */

/** A labelled bar for a percentage. */
function meter(
  label: string,
  percent: number | null,
  text: string,
  key: string
): HTMLElement {
  const labelId = uniqueId('cgu-meter');
  const clamped = percent === null ? null : Math.min(100, Math.max(0, percent));
  return h(
    'div',
    { class: 'cgu-Meter', 'data-cgu': `meter-${key}` },
    h('div', { class: 'cgu-Meter-label', id: labelId }, label),
    clamped === null
      ? null
      : h(
          'div',
          {
            class:
              'cgu-Meter-bar' +
              (clamped >= 90
                ? ' cgu-mod-high'
                : clamped >= 70
                  ? ' cgu-mod-mid'
                  : ''),
            role: 'progressbar',
            'aria-labelledby': labelId,
            'aria-valuemin': 0,
            'aria-valuemax': 100,
            'aria-valuenow': Math.round(clamped),
            'aria-valuetext': text
          },
          h('div', {
            class: 'cgu-Meter-fill',
            style: `width: ${clamped.toFixed(1)}%`
          })
        ),
    h('div', { class: 'cgu-Meter-text' }, text)
  );
}

/** The Resources panel's content. */
export class ResourcesPanel extends ModelViewer {
  constructor(options: {
    model: ResourcesModel;
    /** Shown when the user may resize (the owner). */
    onResize: (() => void) | null;
  }) {
    super(options.model);
    this.addClass('cgu-Resources');
    this.node.dataset.cgu = 'resources-panel';
    this._figures = h('div', { class: 'cgu-Resources-figures' });
    this._footer = h('div', {
      class: 'cgu-Resources-updated',
      role: 'status',
      'aria-live': 'polite'
    });
    const actions = h(
      'div',
      { class: 'cgu-Resources-actions' },
      h(
        'button',
        {
          type: 'button',
          class: 'jp-Button jp-mod-styled cgu-Resources-refresh',
          'data-cgu': 'resources-refresh',
          onclick: () => void this.model.refresh()
        },
        'Refresh'
      ),
      options.onResize
        ? h(
            'button',
            {
              type: 'button',
              class:
                'jp-Button jp-mod-styled jp-mod-accept cgu-Resources-resize',
              'data-cgu': 'resize-button',
              onclick: options.onResize
            },
            'Resize…'
          )
        : null
    );
    replaceChildren(
      this.node,
      h('h2', { class: 'cgu-Resources-title' }, 'Resources of this notebook'),
      this._figures,
      this._footer,
      actions
    );
    this.model.changed.connect(this._render, this);
    this._render();
  }

  private _render(): void {
    const model = this.model;
    const resources = model.resources;
    this._footer.textContent = model.error
      ? `Could not refresh: ${model.error}`
      : model.updatedAt
        ? `Updated at ${model.updatedAt.toLocaleTimeString()}.`
        : 'Loading…';
    this._footer.classList.toggle('cgu-mod-error', !!model.error);
    if (!resources) {
      return;
    }
    replaceChildren(this._figures, ...ResourcesPanel.figures(resources));
  }

  /** The panel's figures for a resources answer. */
  static figures(resources: IResources): HTMLElement[] {
    const cpu = resources.cpu;
    const memory = resources.memory;
    const cpuText =
      `${formatNumber(cpu.used_cores)} ` +
      (cpu.limit_cores === null
        ? 'cores in use (no limit)'
        : `of ${formatCores(cpu.limit_cores)}`) +
      (cpuPercent(resources) === null
        ? ''
        : ` (${formatPercent(cpuPercent(resources))})`);
    const memoryPercent = percentOf(memory.used_bytes, memory.limit_bytes);
    const memoryText =
      memory.limit_bytes === null
        ? `${formatBytes(memory.used_bytes)} in use (no limit)`
        : `${formatBytePair(memory.used_bytes, memory.limit_bytes)}` +
          ` (${formatPercent(memoryPercent)})`;
    const gpuPart = hasGpus(resources)
      ? resources.gpus.devices.map((device, index) =>
          h(
            'div',
            {
              class: 'cgu-Resources-gpu',
              'data-cgu': 'resources-gpu',
              'data-gpu-uuid': device.uuid
            },
            h(
              'h4',
              {},
              `GPU ${index}: ${device.model}` +
                (device.mig_profile ? ` (MIG ${device.mig_profile})` : '')
            ),
            meter(
              'Utilisation',
              device.utilization,
              formatPercent(device.utilization),
              `gpu-${index}-utilization`
            ),
            meter(
              'Memory',
              percentOf(device.memory_used, device.memory_total),
              formatBytePair(device.memory_used, device.memory_total),
              `gpu-${index}-memory`
            )
          )
        )
      : [
          h(
            'p',
            { class: 'cgu-Resources-noGpu', 'data-cgu': 'resources-no-gpu' },
            gpuLines(resources)[0]
          )
        ];
    return [
      h('h3', {}, 'Requested'),
      h(
        'p',
        { class: 'cgu-Resources-requested', 'data-cgu': 'resources-requested' },
        requestedText(resources)
      ),
      h('h3', {}, 'In use'),
      meter('CPU', cpuPercent(resources), cpuText, 'cpu'),
      meter('Memory', memoryPercent, memoryText, 'memory'),
      h('h3', {}, 'GPUs'),
      ...gpuPart
    ];
  }

  private _figures: HTMLElement;
  private _footer: HTMLElement;
}

/* ------------------------------------------------------------------ resize */

/** The body of the Resize dialog. */
export class ResizeBody
  extends Widget
  implements Dialog.IBodyWidget<IResizeForm>
{
  constructor(quota: IQuota, resources: IResources) {
    super();
    this.addClass('cgu-Resize');
    this.node.dataset.cgu = 'resize-dialog';
    const form = resizeFormFrom(resources.requested);
    const field = (
      label: string,
      input: HTMLInputElement | HTMLSelectElement,
      note?: string
    ): HTMLElement => {
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
    };
    this._cpus = h('input', {
      type: 'number',
      id: uniqueId('cgu-resize-cpus'),
      class: 'jp-mod-styled',
      min: 0.1,
      step: 'any',
      value: formatNumber(form.cpus, 3),
      'data-cgu': 'resize-cpus'
    });
    this._memory = h('input', {
      type: 'number',
      id: uniqueId('cgu-resize-memory'),
      class: 'jp-mod-styled',
      min: 0.1,
      step: 'any',
      value: formatNumber(form.memoryGiB, 3),
      'data-cgu': 'resize-memory'
    });
    const choices = gpuTypeChoices(quota);
    if (form.gpuType && !choices.some(c => c.value === form.gpuType)) {
      // The notebook's type is no longer offered: keep it choosable.
      choices.push({ value: form.gpuType, label: form.gpuType, allowed: true });
    }
    this._gpuType = h(
      'select',
      {
        id: uniqueId('cgu-resize-gpu-type'),
        class: 'jp-mod-styled',
        'data-cgu': 'resize-gpu-type',
        onchange: () => this._onGpuTypeChange()
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
    this._gpus = h('input', {
      type: 'number',
      id: uniqueId('cgu-resize-gpus'),
      class: 'jp-mod-styled',
      min: 0,
      step: 1,
      value: form.gpus,
      disabled: !form.gpuType,
      'data-cgu': 'resize-gpus'
    });
    this._error = h('div', {
      class: 'cgu-Resize-error',
      role: 'alert',
      'data-cgu': 'resize-error',
      hidden: true
    });
    replaceChildren(
      this.node,
      h(
        'p',
        { class: 'cgu-Resize-warning' },
        'Resizing restarts this notebook server: running kernels stop and ' +
          'unsaved changes are lost. Save your work first.'
      ),
      h(
        'div',
        { class: 'cgu-Resize-quota', 'data-cgu': 'resize-quota' },
        h('h3', {}, 'Your quota and current use'),
        h('ul', {}, ...quotaLines(quota).map(line => h('li', {}, line)))
      ),
      h('p', { class: 'cgu-Resize-now' }, `Now: ${requestedText(resources)}.`),
      field('CPUs', this._cpus, 'e.g. 2 or 0.5'),
      field('Memory (GiB)', this._memory, 'e.g. 4 or 0.5'),
      field('GPU type', this._gpuType),
      field('GPUs', this._gpus, 'how many GPUs of that type'),
      this._error
    );
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
}

/** Open the Resize dialog; resolves true when a resize was accepted. */
export async function openResizeDialog(
  options: IResizeDialogOptions
): Promise<boolean> {
  const resize = options.resize ?? CguAPI.resize;
  const response = await openFormDialog({
    title: 'Resize this notebook',
    body: new ResizeBody(options.quota, options.resources),
    acceptLabel: 'Resize and restart',
    focusNodeSelector: '[data-cgu="resize-cpus"]',
    className: 'cgu-ResizeDialog',
    validate: validateResize,
    send: form => resize(resizeRequest(form)),
    onDone: accepted =>
      options.onAccepted(
        accepted,
        restartTarget(accepted.restart_url, window.location.href)
      )
  });
  return response !== null;
}
