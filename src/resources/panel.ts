/**
 * Resources: the status-bar item and the Resources panel.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { h, replaceChildren, uniqueId } from '../dom';
import {
  formatBytePair,
  formatBytes,
  formatCores,
  formatNumber,
  formatPercent,
  percentOf
} from '../format';
import {
  cpuPercent,
  gpuLines,
  hasGpus,
  requestedText,
  statusBarText,
  statusBarTooltip
} from './format';
import { IGpuDevice, IResources } from '../apiTypes';
import { ResourcesModel } from './model';

/* -------------------------------------------------------------- status bar */

/**
 * A widget that holds the model (keeps it polling) only while it is attached
 * and visible.
 */
class ModelViewer extends Widget {
  constructor(
    protected readonly model: ResourcesModel,
    protected readonly trans: TranslationBundle
  ) {
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
  constructor(
    model: ResourcesModel,
    onClick: () => void,
    trans: TranslationBundle
  ) {
    super(model, trans);
    this.addClass('cgu-ResourcesStatus');
    this._button = h(
      'button',
      {
        type: 'button',
        class: 'cgu-ResourcesStatus-button',
        'data-cgu': 'resources-status',
        onclick: onClick
      },
      trans.__('Resources…')
    );
    this.node.appendChild(this._button);
    model.changed.connect(this._update, this);
    this._update();
  }

  private _update(): void {
    const resources = this.model.resources;
    const trans = this.trans;
    if (this.model.error && !resources) {
      this._button.textContent = trans.__('Resources: unavailable');
      this._button.title = trans.__(
        '%1\nClick to open the Resources panel.',
        this.model.error
      );
      this._button.classList.add('cgu-mod-error');
      return;
    }
    this._button.classList.toggle('cgu-mod-error', !!this.model.error);
    if (!resources) {
      return;
    }
    const tooltip = statusBarTooltip(resources, trans);
    this._button.textContent = statusBarText(resources, trans);
    this._button.title = this.model.error
      ? trans.__('%1\n(Last refresh failed: %2)', tooltip, this.model.error)
      : tooltip;
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

/** The CPU use: cores of the limit, and the percentage when there is one. */
function cpuText(resources: IResources, trans: TranslationBundle): string {
  const cpu = resources.cpu;
  const used = formatNumber(cpu.used_cores);
  const cpuUse =
    cpu.limit_cores === null
      ? trans.__('%1 cores in use (no limit)', used)
      : trans.__('%1 of %2', used, formatCores(cpu.limit_cores, trans));
  const percent = cpuPercent(resources);
  return percent === null
    ? cpuUse
    : trans.__('%1 (%2)', cpuUse, formatPercent(percent));
}

/** The memory use: bytes of the limit and the percentage. */
function memoryText(resources: IResources, trans: TranslationBundle): string {
  const memory = resources.memory;
  return memory.limit_bytes === null
    ? trans.__('%1 in use (no limit)', formatBytes(memory.used_bytes))
    : trans.__(
        '%1 (%2)',
        formatBytePair(memory.used_bytes, memory.limit_bytes),
        formatPercent(percentOf(memory.used_bytes, memory.limit_bytes))
      );
}

/** A figure per GPU, or the sentence why there are none. */
function gpuFigures(
  resources: IResources,
  trans: TranslationBundle
): HTMLElement[] {
  if (!hasGpus(resources)) {
    return [
      h(
        'p',
        { class: 'cgu-Resources-noGpu', 'data-cgu': 'resources-no-gpu' },
        gpuLines(resources, trans)[0]
      )
    ];
  }
  return resources.gpus.devices.map((device, index) =>
    gpuFigure(device, index, trans)
  );
}

/** One GPU's model, utilisation and memory. */
function gpuFigure(
  device: IGpuDevice,
  index: number,
  trans: TranslationBundle
): HTMLElement {
  return h(
    'div',
    {
      class: 'cgu-Resources-gpu',
      'data-cgu': 'resources-gpu',
      'data-gpu-uuid': device.uuid
    },
    h(
      'h4',
      {},
      device.mig_profile
        ? trans.__(
            'GPU %1: %2 (MIG %3)',
            index,
            device.model,
            device.mig_profile
          )
        : trans.__('GPU %1: %2', index, device.model)
    ),
    meter(
      trans.__('Utilisation'),
      device.utilization,
      formatPercent(device.utilization),
      `gpu-${index}-utilization`
    ),
    meter(
      trans.__('Memory'),
      percentOf(device.memory_used, device.memory_total),
      formatBytePair(device.memory_used, device.memory_total),
      `gpu-${index}-memory`
    )
  );
}

/** The Resources panel's content. */
export class ResourcesPanel extends ModelViewer {
  constructor(options: {
    model: ResourcesModel;
    /** Shown when the user may resize (the owner). */
    onResize: (() => void) | null;
    trans: TranslationBundle;
  }) {
    super(options.model, options.trans);
    const trans = options.trans;
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
        trans.__('Refresh')
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
            trans.__('Resize…')
          )
        : null
    );
    replaceChildren(
      this.node,
      h(
        'h2',
        { class: 'cgu-Resources-title' },
        trans.__('Resources of this notebook')
      ),
      this._figures,
      this._footer,
      actions
    );
    this.model.changed.connect(this._render, this);
    this._render();
  }

  private _render(): void {
    const model = this.model;
    const trans = this.trans;
    const resources = model.resources;
    this._footer.textContent = model.error
      ? trans.__('Could not refresh: %1', model.error)
      : model.updatedAt
        ? trans.__('Updated at %1.', model.updatedAt.toLocaleTimeString())
        : trans.__('Loading…');
    this._footer.classList.toggle('cgu-mod-error', !!model.error);
    if (!resources) {
      return;
    }
    replaceChildren(this._figures, ...ResourcesPanel.figures(resources, trans));
  }

  /** The panel's figures for a resources answer. */
  static figures(
    resources: IResources,
    trans: TranslationBundle
  ): HTMLElement[] {
    const percent = cpuPercent(resources);
    const memory = resources.memory;
    const memoryPercent = percentOf(memory.used_bytes, memory.limit_bytes);
    const gpuPart = gpuFigures(resources, trans);
    return [
      h('h3', {}, trans.__('Requested')),
      h(
        'p',
        { class: 'cgu-Resources-requested', 'data-cgu': 'resources-requested' },
        requestedText(resources, trans)
      ),
      h('h3', {}, trans.__('In use')),
      meter(trans.__('CPU'), percent, cpuText(resources, trans), 'cpu'),
      meter(
        trans.__('Memory'),
        memoryPercent,
        memoryText(resources, trans),
        'memory'
      ),
      h('h3', {}, trans.__('GPUs')),
      ...gpuPart
    ];
  }

  private _figures: HTMLElement;
  private _footer: HTMLElement;
}
