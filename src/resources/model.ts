/**
 * Resources: a model that polls `GET resources` while someone looks at it.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';
import { CguAPI, errorMessage } from '../api';
import { pollFrequency } from '../polling';
import { IResources } from '../apiTypes';
import { IResourcesModel } from '../tokens';

/* ------------------------------------------------------------------ model */

/**
 * Polls `GET resources` every `interval` seconds while at least one user
 * (the status-bar item, the panel) holds it and the page is visible; backs
 * off after failures.
 */
export class ResourcesModel implements IResourcesModel {
  constructor(options: {
    trans: TranslationBundle;
    fetch?: () => Promise<IResources>;
    interval?: number;
  }) {
    this._trans = options.trans;
    this._fetch = options.fetch ?? CguAPI.resources;
    this._interval = options.interval ?? 5;
    this._poll = new Poll({
      auto: false,
      factory: () => this._load(),
      frequency: pollFrequency(this._interval),
      name: 'cgu-lab:resources',
      // Nobody looking, or a hidden page: the poll ticks without asking.
      standby: () => (this._users > 0 ? 'when-hidden' : true)
    });
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
    this._poll.frequency = pollFrequency(this._interval);
  }

  /**
   * Start receiving updates; call the returned function to stop. Polling runs
   * while anyone holds the model.
   */
  use(): () => void {
    this._users += 1;
    if (this._users === 1) {
      void this._poll.refresh();
    }
    let released = false;
    return () => {
      if (!released) {
        released = true;
        this._users -= 1;
      }
    };
  }

  /** Fetch the figures now (while someone holds the model); resolves once they arrived. */
  async refresh(): Promise<void> {
    await this._poll.refresh();
    await this._poll.tick.catch(() => undefined);
  }

  dispose(): void {
    this._poll.dispose();
    Signal.clearData(this);
  }

  /** One answer; rejects (so the poll backs off) when there is none. */
  private async _load(): Promise<void> {
    try {
      this._resources = await this._fetch();
      this._error = null;
    } catch (error) {
      this._error = errorMessage(error, this._trans);
      throw error;
    } finally {
      this._updatedAt = new Date();
      this._changed.emit();
    }
  }

  private _trans: TranslationBundle;
  private _fetch: () => Promise<IResources>;
  private _interval: number;
  private _poll: Poll;
  private _resources: IResources | null = null;
  private _error: string | null = null;
  private _updatedAt: Date | null = null;
  private _users = 0;
  private _changed = new Signal<IResourcesModel, void>(this);
}
