/**
 * The help queue as this page knows it: one `GET cgu-lab/help` polled for
 * the Ask-for-help button, the status item and the Help queue panel. It asks
 * every few seconds while there is something to watch (my hand is up, or I
 * help in a course), once a minute otherwise, backing off after failures,
 * standing by while the page is hidden and for good once the page's access
 * ended (api.ts `endRequests`).
 */
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';
import { requestAPI, requestsEnded } from '../api';
import { pollFrequency } from '../polling';
import {
  actionPath,
  cleanQuestion,
  IHelpAskForm,
  IHelpOverview,
  IHelpRequest,
  needsWatching
} from './format';

/** The calls the model makes; replaceable in tests. */
export interface IHelpTransport {
  overview(): Promise<IHelpOverview>;
  ask(body: IHelpAskForm): Promise<IHelpRequest>;
  act(path: string): Promise<IHelpRequest>;
}

/** The lab routes of the notebook's origin. */
export const labTransport: IHelpTransport = {
  overview: () => requestAPI<IHelpOverview>('help'),
  ask: body =>
    requestAPI<IHelpRequest>('help', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' }
    }),
  act: path => requestAPI<IHelpRequest>(path, { method: 'POST' })
};

/** Seconds between answers while something is watched, and otherwise. */
export const WATCH_SECONDS = 5;
export const IDLE_SECONDS = 60;

export class HelpModel {
  constructor(
    private readonly _transport: IHelpTransport = labTransport,
    ended: () => boolean = requestsEnded
  ) {
    this._poll = new Poll({
      auto: false,
      factory: () => this._load(),
      frequency: pollFrequency(IDLE_SECONDS),
      name: 'cgu-lab:help',
      standby: () => (ended() ? true : 'when-hidden')
    });
  }

  /** The latest answer; null before the first. */
  get overview(): IHelpOverview | null {
    return this._overview;
  }

  /** The latest failure as an error; null after a good answer. */
  get error(): unknown {
    return this._error;
  }

  /** Emitted after every answer (good or bad) and every change made here. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Resolves with the first answer (or null when it failed). */
  get ready(): Promise<IHelpOverview | null> {
    return this._ready;
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  start(): void {
    void this._poll.start();
  }

  /** Ask now; resolves once the answer arrived (or failed). */
  async refresh(): Promise<void> {
    await this._poll.refresh();
    await this._poll.tick.catch(() => undefined);
  }

  /** Raise my hand about this notebook. */
  async ask(value: IHelpAskForm): Promise<IHelpRequest> {
    const created = await this._transport.ask({
      ...value,
      question: cleanQuestion(value.question)
    });
    this._merge(created);
    void this.refresh();
    return created;
  }

  /** Take a request (its staff): the notebook is shared with me. */
  async take(request: IHelpRequest): Promise<IHelpRequest> {
    return this._act(request, 'take');
  }

  /** End a request: Done (staff), Thanks or Cancel (the student). */
  async end(request: IHelpRequest): Promise<IHelpRequest> {
    return this._act(request, 'end');
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    Signal.clearData(this);
  }

  private async _act(
    request: IHelpRequest,
    action: 'take' | 'end'
  ): Promise<IHelpRequest> {
    const changed = await this._transport.act(actionPath(request, action));
    this._merge(changed);
    void this.refresh();
    return changed;
  }

  /** Put a request just changed here into what is shown, until the next answer. */
  private _merge(request: IHelpRequest): void {
    const overview = this._overview;
    if (!overview) {
      return;
    }
    const replace = (list: IHelpRequest[]) => {
      const i = list.findIndex(r => r.id === request.id);
      if (i >= 0) {
        list[i] = request;
      }
      return i >= 0;
    };
    if (!replace(overview.mine) && overview.courses.includes(request.group)) {
      overview.mine.push(request);
    }
    overview.queues.forEach(q => replace(q.requests));
    this._changed.emit();
  }

  private async _load(): Promise<void> {
    try {
      this._overview = await this._transport.overview();
      this._error = null;
    } catch (error) {
      this._error = error;
      this._changed.emit();
      this._resolveReady(null);
      throw error;
    }
    const seconds = needsWatching(this._overview)
      ? WATCH_SECONDS
      : IDLE_SECONDS;
    if (this._poll.frequency.interval !== seconds * 1000) {
      this._poll.frequency = pollFrequency(seconds);
    }
    this._changed.emit();
    this._resolveReady(this._overview);
  }

  private _poll: Poll;
  private _overview: IHelpOverview | null = null;
  private _error: unknown = null;
  private _changed = new Signal<this, void>(this);
  private _resolveReady: (value: IHelpOverview | null) => void = () =>
    undefined;
  private _ready = new Promise<IHelpOverview | null>(resolve => {
    this._resolveReady = resolve;
  });
}
