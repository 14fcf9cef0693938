/**
 * JupyterLab's own requests and connections, seen and held for the platform.
 * Every service of JupyterLab (contents, kernels, sessions, terminals,
 * kernel specs, settings, workspaces, events) sends through one settings
 * object, `serviceManager.serverSettings`; the gate wraps its `fetch` and
 * `WebSocket`:
 *
 * - an answer about the whole page (the notebook stopped, the share ended,
 *   the log-in expired) is reported at once (`report`), as the extension's
 *   own answers are, so the page says why after one refused request;
 * - the proxy's `502 not_answering` (it reached no server: the server was
 *   just killed, the platform does not know yet) goes on to JupyterLab as a
 *   503, which JupyterLab takes as "the server is not running, try again
 *   later" (as behind JupyterHub) instead of "Kernel died unexpectedly", and
 *   is reported (`notAnswering`) so the platform is asked again soon;
 * - once the access ended (`end`), JupyterLab's requests wait for ever and its
 *   websockets never open, without leaving the page: every poller and
 *   reconnect loop (the file browser's, the kernels', the sessions', ...)
 *   falls silent; the websockets that were open are closed;
 * - while the notebook is stopped (`hold`), JupyterLab's requests get the
 *   platform's 503 from the page itself: each poller backs off as it does for
 *   a stopped server, with no request on the network, until `open`.
 *
 * No JupyterLab import: tested in src/__tests__ with fakes.
 */
import { IPlatformError } from '../apiTypes';

/** The error codes of the platform that are about the whole page. */
const PAGE_CODES = new Set(['notebook_stopped', 'no_access', 'login']);

/** What the proxy answers when the notebook's server did not answer. */
const NOT_ANSWERING = 'not_answering';

/** The two members of `ServerConnection.ISettings` the gate wraps. */
export interface IGatedSettings {
  fetch: (input: RequestInfo, init?: RequestInit) => Promise<Response>;
  WebSocket: typeof WebSocket;
}

export type GateState = 'open' | 'held' | 'ended';

/** A websocket that never opens, never closes and sends nothing. */
class SilentSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  readonly CONNECTING = 0;
  readonly OPEN = 1;
  readonly CLOSING = 2;
  readonly CLOSED = 3;
  readyState = 0;
  binaryType = 'blob';
  bufferedAmount = 0;
  extensions = '';
  protocol = '';
  onopen: unknown = null;
  onclose: unknown = null;
  onerror: unknown = null;
  onmessage: unknown = null;

  constructor(readonly url: string) {}

  send(): void {
    // Never open: nothing is sent.
  }

  close(): void {
    this.readyState = 3;
  }

  addEventListener(): void {
    // Nothing ever happens on it.
  }

  removeEventListener(): void {
    // Nothing was added.
  }

  dispatchEvent(): boolean {
    return false;
  }
}

/** The code of a JSON error body, or '' (an HTML page, no body). */
async function errorOf(response: Response): Promise<IPlatformError | null> {
  const type = response.headers.get('Content-Type') ?? '';
  if (!type.includes('json')) {
    return null;
  }
  try {
    const body = (await response.clone().json()) as IPlatformError;
    return body && typeof body.code === 'string' ? body : null;
  } catch {
    return null;
  }
}

export class ServiceGate {
  constructor(
    settings: IGatedSettings,
    private readonly _o: {
      /** An answer about the whole page (status and body). */
      report: (status: number, body: IPlatformError) => void;
      /** The notebook's server did not answer the proxy. */
      notAnswering: () => void;
    }
  ) {
    const fetch = settings.fetch;
    const RealSocket = settings.WebSocket;
    settings.fetch = (input, init) => this._fetch(fetch, input, init);
    const open = (url: string, protocols?: string | string[]): WebSocket =>
      this._socket(RealSocket, url, protocols);
    // A function called with `new`: the object it returns is the socket.
    const GatedSocket = function (url: string, protocols?: string | string[]) {
      return open(url, protocols);
    } as unknown as typeof WebSocket;
    Object.assign(GatedSocket, {
      CONNECTING: 0,
      OPEN: 1,
      CLOSING: 2,
      CLOSED: 3
    });
    settings.WebSocket = GatedSocket;
  }

  get state(): GateState {
    return this._state;
  }

  /** The notebook stopped: answer JupyterLab with this 503 from the page. */
  hold(answer: IPlatformError): void {
    if (this._state !== 'ended') {
      this._state = 'held';
      this._answer = answer;
    }
  }

  /** The access ended: nothing of JupyterLab reaches the network any more. */
  end(): void {
    this._state = 'ended';
    for (const socket of this._sockets) {
      socket.close();
    }
    this._sockets.clear();
  }

  /** The notebook runs again: JupyterLab's requests go out again. */
  open(): void {
    if (this._state === 'held') {
      this._state = 'open';
    }
  }

  private async _fetch(
    fetch: IGatedSettings['fetch'],
    input: RequestInfo,
    init?: RequestInit
  ): Promise<Response> {
    if (this._state === 'ended') {
      return new Promise<Response>(() => undefined);
    }
    if (this._state === 'held') {
      return this._held();
    }
    const response = await fetch(input, init);
    if (response.ok || response.status < 400) {
      return response;
    }
    const error = await errorOf(response);
    if (error && response.status === 502 && error.code === NOT_ANSWERING) {
      this._o.notAnswering();
      return new Response(await response.text(), {
        status: 503,
        statusText: 'Service Unavailable',
        headers: response.headers
      });
    }
    if (error && PAGE_CODES.has(error.code ?? '')) {
      this._o.report(response.status, error);
      // The report may have ended the page (the share was revoked).
      if ((this._state as GateState) === 'ended') {
        return new Promise<Response>(() => undefined);
      }
    }
    return response;
  }

  private _held(): Response {
    return new Response(JSON.stringify(this._answer), {
      status: 503,
      statusText: 'Service Unavailable',
      headers: { 'Content-Type': 'application/json' }
    });
  }

  private _socket(
    RealSocket: typeof WebSocket,
    url: string,
    protocols?: string | string[]
  ): WebSocket {
    if (this._state !== 'open') {
      return new SilentSocket(url) as unknown as WebSocket;
    }
    const socket = new RealSocket(url, protocols);
    this._sockets.add(socket);
    socket.addEventListener('close', () => this._sockets.delete(socket));
    return socket;
  }

  private _state: GateState = 'open';
  private _answer: IPlatformError = {
    message: 'the notebook is not running',
    code: 'notebook_stopped'
  };
  private _sockets = new Set<WebSocket>();
}
