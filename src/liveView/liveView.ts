/**
 * The live view of a read-only viewer (a broadcast): documents the viewer has
 * open reload by themselves when the owner saves them. Every few seconds (a
 * `@lumino/polling` Poll, standing by while the page is hidden) the contents
 * API is asked for each open document's `last_modified` (without the
 * content); a document whose file changed and that the viewer did not change
 * is reverted (JupyterLab may mark a document dirty while loading it, so
 * "changed" means dirty and different from what was loaded). A status-bar
 * label "Live view" says it is on. When to reload is decided by
 * `liveViewAction` in `format.ts`.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { DocumentRegistry, DocumentWidget } from '@jupyterlab/docregistry';
import { Contents } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';
import { h } from '../dom';
import { pollFrequency } from '../polling';
import { liveViewAction, liveViewTooltip } from './format';

/** What the live view needs. */
export interface ILiveViewOptions {
  /** The open documents, e.g. the main area's document widgets. */
  documents: () => Iterable<DocumentRegistry.Context>;
  contents: Pick<Contents.IManager, 'get'>;
  /** Seconds between checks (at least 1). */
  interval: number;
  /** Whose notebook this is, for the tooltip. */
  owner: string;
  status?: LiveViewStatus | null;
  trans: TranslationBundle;
}

/** The open documents of the main area (one context per file). */
export function openDocuments(
  shell: JupyterFrontEnd.IShell
): DocumentRegistry.Context[] {
  const contexts = new Map<string, DocumentRegistry.Context>();
  for (const widget of shell.widgets('main')) {
    if (widget instanceof DocumentWidget && !widget.isDisposed) {
      const context = widget.context as DocumentRegistry.Context;
      if (!context.isDisposed && !contexts.has(context.path)) {
        contexts.set(context.path, context);
      }
    }
  }
  return Array.from(contexts.values());
}

export class LiveView {
  constructor(options: ILiveViewOptions) {
    this._options = options;
    this._interval = Math.max(1, options.interval);
    this._poll = new Poll({
      auto: false,
      factory: () => this.check(),
      frequency: pollFrequency(this._interval),
      name: 'cgu-lab:live-view',
      standby: 'when-hidden'
    });
    this._updateStatus();
  }

  /** Seconds between checks. */
  get interval(): number {
    return this._interval;
  }
  set interval(seconds: number) {
    this._interval = Math.max(1, Number.isFinite(seconds) ? seconds : 5);
    this._poll.frequency = pollFrequency(this._interval);
    this._updateStatus();
  }

  /** Start checking. */
  start(): void {
    void this._poll.start();
  }

  /** Check now (and then on as before); resolves once checked. */
  async refresh(): Promise<void> {
    await this._poll.refresh();
    await this._poll.tick.catch(() => undefined);
  }

  /**
   * Check every open document once; reload those that changed. (The poll's
   * work: call `refresh` to check now.)
   */
  async check(): Promise<void> {
    const documents = Array.from(this._options.documents());
    const paused: string[] = [];
    await Promise.all(
      documents.map(async context => {
        if (!context.isReady || this._busy.has(context)) {
          return;
        }
        if (!this._baseline.has(context)) {
          this._baseline.set(context, context.model.toString());
        }
        let current: string | null = null;
        try {
          const model = await this._options.contents.get(context.path, {
            content: false
          });
          current = model.last_modified ?? null;
        } catch {
          return; // gone or unreadable now: try again next time
        }
        if (context.isDisposed) {
          return;
        }
        const loaded = context.contentsModel?.last_modified;
        const dirty = context.model.dirty;
        const changed = !!loaded && !!current && loaded !== current;
        const action = liveViewAction({
          loaded,
          current,
          dirty,
          // Serialise only when it matters: changed on the server and dirty.
          edited:
            changed && dirty
              ? context.model.toString() !== this._baseline.get(context)
              : undefined,
          busy: this._busy.has(context)
        });
        if (action === 'paused') {
          paused.push(context.localPath || context.path);
        } else if (action === 'revert') {
          this._busy.add(context);
          try {
            await context.revert();
            this._baseline.set(context, context.model.toString());
            this._lastUpdate = new Date();
            this._options.status?.flash();
          } catch (error) {
            console.warn(`cgu-lab: could not reload ${context.path}`, error);
          } finally {
            this._busy.delete(context);
          }
        }
      })
    );
    this._paused = paused;
    this._updateStatus();
  }

  dispose(): void {
    this._poll.dispose();
  }

  private _updateStatus(): void {
    this._options.status?.setState(
      liveViewTooltip(
        this._options.owner,
        this._interval,
        this._paused,
        this._lastUpdate ? this._lastUpdate.toLocaleTimeString() : null,
        this._options.trans
      ),
      this._paused.length > 0
    );
  }

  private _options: ILiveViewOptions;
  private _interval: number;
  private _busy = new Set<DocumentRegistry.Context>();
  /** What each document held when the live view first saw it or reloaded it. */
  private _baseline = new WeakMap<DocumentRegistry.Context, string>();
  private _paused: string[] = [];
  private _lastUpdate: Date | null = null;
  private _poll: Poll;
}

/** The status-bar label "Live view"; a click checks now. */
export class LiveViewStatus extends Widget {
  constructor(onClick: () => void, trans: TranslationBundle) {
    super();
    this.addClass('cgu-LiveStatus');
    this._button = h(
      'button',
      {
        type: 'button',
        class: 'cgu-LiveStatus-button',
        'data-cgu': 'live-view-status',
        onclick: onClick
      },
      h('span', { class: 'cgu-LiveDot', 'aria-hidden': 'true' }),
      trans.__('Live view')
    );
    this.node.appendChild(this._button);
  }

  /** The tooltip, and whether some document is not reloaded. */
  setState(tooltip: string, paused: boolean): void {
    this._button.title = tooltip;
    this._button.classList.toggle('cgu-mod-paused', paused);
    this._button.dataset.paused = paused ? 'true' : 'false';
  }

  /** Show briefly that a document was reloaded. */
  flash(): void {
    this._button.dataset.updatedAt = new Date().toISOString();
    this._button.classList.add('cgu-mod-updated');
    window.clearTimeout(this._flashTimer);
    this._flashTimer = window.setTimeout(
      () => this._button.classList.remove('cgu-mod-updated'),
      1500
    );
  }

  dispose(): void {
    window.clearTimeout(this._flashTimer);
    super.dispose();
  }

  private _button: HTMLButtonElement;
  private _flashTimer = 0;
}
