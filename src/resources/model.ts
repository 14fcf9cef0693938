/**
 * Resources: a model that polls `GET resources` while someone looks at it.
 */
import { ISignal, Signal } from '@lumino/signaling';
import { CguAPI, errorMessage } from '../api';
import { pollDelaySeconds } from '../format';
import { IResources } from '../apiTypes';
import { IResourcesModel } from '../tokens';

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
