import { IGatedSettings, ServiceGate } from '../platform/gate';
import { IPlatformError } from '../apiTypes';

/** A settings object as JupyterLab's, whose fetch answers what the test says. */
function fakeSettings(answer: () => Response) {
  const sent: string[] = [];
  const sockets: string[] = [];
  class FakeSocket {
    closed = false;
    listeners: (() => void)[] = [];
    constructor(readonly url: string) {
      sockets.push(url);
      opened.push(this);
    }
    addEventListener(_: string, listener: () => void): void {
      this.listeners.push(listener);
    }
    close(): void {
      this.closed = true;
      this.listeners.forEach(l => l());
    }
  }
  const opened: FakeSocket[] = [];
  const settings: IGatedSettings = {
    fetch: async (input: RequestInfo) => {
      sent.push(String(input));
      return answer();
    },
    WebSocket: FakeSocket as unknown as typeof WebSocket
  };
  return { settings, sent, sockets, opened };
}

function json(status: number, body: object): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' }
  });
}

/** Whether a promise settles within a few event-loop turns. */
async function settles(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true)
  );
  for (let i = 0; i < 5; i++) {
    await new Promise(resolve => setTimeout(resolve, 0));
  }
  return done;
}

describe('the gate of JupyterLab’s own requests', () => {
  it('lets ordinary answers through untouched and reports page problems at once', async () => {
    let next = json(200, { ok: true });
    const { settings } = fakeSettings(() => next);
    const reports: [number, IPlatformError][] = [];
    new ServiceGate(settings, {
      report: (status, body) => reports.push([status, body]),
      notAnswering: () => undefined
    });
    expect((await settings.fetch('/api/contents')).status).toBe(200);
    next = json(404, { message: 'no such file', code: 'not_found' });
    expect((await settings.fetch('/api/contents/x')).status).toBe(404);
    next = json(503, { message: 'stopped', code: 'notebook_stopped' });
    expect((await settings.fetch('/api/sessions')).status).toBe(503);
    expect(reports).toEqual([
      [503, { message: 'stopped', code: 'notebook_stopped' }]
    ]);
  });

  it('turns the proxy’s 502 not_answering into a 503 (no "Kernel died") and says so', async () => {
    const { settings } = fakeSettings(() =>
      json(502, { message: 'not answering', code: 'not_answering' })
    );
    let told = 0;
    new ServiceGate(settings, {
      report: () => undefined,
      notAnswering: () => (told += 1)
    });
    const response = await settings.fetch('/api/kernels/k1');
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      message: 'not answering',
      code: 'not_answering'
    });
    expect(told).toBe(1);
  });

  it('once the access ended, nothing reaches the network: requests wait, sockets never open', async () => {
    const { settings, sent, sockets, opened } = fakeSettings(() =>
      json(404, { message: 'revoked', code: 'no_access' })
    );
    let gate: ServiceGate | null = null;
    gate = new ServiceGate(settings, {
      report: (_, body) => body.code === 'no_access' && gate!.end(),
      notAnswering: () => undefined
    });
    const before = new settings.WebSocket('ws://x/api/kernels/k1/channels');
    // The refused request that tells the page ends it, and waits itself.
    expect(await settles(settings.fetch('/api/contents'))).toBe(false);
    expect(gate.state).toBe('ended');
    expect(opened[0].closed).toBe(true);
    expect(await settles(settings.fetch('/api/contents'))).toBe(false);
    const after = new settings.WebSocket('ws://x/api/events/subscribe');
    expect(after.readyState).toBe(settings.WebSocket.CONNECTING);
    after.send('nothing');
    expect(sent).toEqual(['/api/contents']);
    expect(sockets).toEqual(['ws://x/api/kernels/k1/channels']);
    expect(before).toBe(opened[0]);
    // Nothing opens it again.
    gate.open();
    expect(gate.state).toBe('ended');
  });

  it('while the notebook is stopped, answers the platform’s 503 from the page, until it runs again', async () => {
    const { settings, sent } = fakeSettings(() => json(200, {}));
    const gate = new ServiceGate(settings, {
      report: () => undefined,
      notAnswering: () => undefined
    });
    gate.hold({ message: 'stopped for idleness', code: 'notebook_stopped' });
    const held = await settings.fetch('/api/sessions');
    expect(held.status).toBe(503);
    expect((await held.json()).code).toBe('notebook_stopped');
    const socket = new settings.WebSocket('ws://x/api/kernels/k1/channels');
    expect(socket.readyState).toBe(0);
    expect(sent).toEqual([]);
    gate.open();
    expect((await settings.fetch('/api/sessions')).status).toBe(200);
    expect(sent).toEqual(['/api/sessions']);
  });
});
