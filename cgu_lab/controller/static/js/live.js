// @ts-check
// A page kept current by a Server-Sent Events stream instead of polling. The stream
// only says "something changed"; the page then reloads what it shows, as it would
// on a timer. A slow timer stays as the safety net for changes no event announces
// (a notebook created or deleted elsewhere) and for a stream that cannot connect.

// Several events of one operation in a row (starting, running) cause one reload.
const SETTLE_MS = 300;

/**
 * Reload with `reload` when the stream at `url()` reports a change, when it
 * (re)connects (what changed meanwhile is unknown) and every `fallbackMs`. While the
 * tab is hidden nothing runs and the stream is closed: browsers allow few
 * connections per site, and a hidden tab needs none of them.
 * @param {() => string} url asked at each opening, so a page's filters can change it
 * @param {() => unknown} reload
 * @param {{ fallbackMs?: number }} [options]
 * @returns {{ reconnect(): void }} reconnect: follow `url()` anew (its filters changed)
 */
export function liveReload(url, reload, { fallbackMs = 30_000 } = {}) {
  /** @type {EventSource | null} */
  let source = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let settle;
  /** @type {ReturnType<typeof setInterval> | undefined} */
  let fallback;

  const soon = () => {
    clearTimeout(settle);
    settle = setTimeout(reload, SETTLE_MS);
  };

  function open() {
    source?.close();
    source = new EventSource(url());
    source.addEventListener('open', soon);
    source.addEventListener('message', soon);
    // A dropped connection is retried by the browser itself; a refused one (the
    // session ended) stays closed, and the fallback timer carries on alone.
  }

  function start() {
    open();
    fallback = setInterval(() => {
      if (source?.readyState === EventSource.CLOSED) open();
      reload();
    }, fallbackMs);
  }

  function stop() {
    source?.close();
    source = null;
    clearTimeout(settle);
    clearInterval(fallback);
  }

  document.addEventListener('visibilitychange', () => {
    stop();
    if (!document.hidden) start(); // its "open" reloads what the hidden tab missed
  });
  if (!document.hidden) start();

  return {
    reconnect() {
      if (!document.hidden) open();
    }
  };
}
