/**
 * Resources: the status-bar item and the Resources panel.
 */
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
import { IResources } from '../apiTypes';
import { ResourcesModel } from './model';

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
