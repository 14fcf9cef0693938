// @ts-check
// A page (or a tab of one) kept current by a Server-Sent Events stream instead of
// polling. The stream only says "something changed"; the page then reloads what it
// shows, as it would on a timer. A slow timer stays as the safety net for changes no
// event announces (a notebook created or deleted elsewhere) and for a stream that
// cannot connect.

// Several events of one operation in a row (starting, running) cause one reload.
const SETTLE_MS = 300;

/**
 * Reload with `reload` when the stream at `url()` reports a change, when it
 * (re)connects (what changed meanwhile is unknown) and every `fallbackMs`. While the
 * tab is hidden nothing runs and the stream is closed: browsers allow few
 * connections per site, and a hidden tab needs none of them.
 * @param {() => string} url asked at each opening, so a page's filters can change it
 * @param {() => unknown} reload
 * @param {{ fallbackMs?: number, shown?: boolean }} [options] shown: false for a part of
 *   the page that is hidden at first (a tab); `show` starts it
 * @returns {{ reconnect(): void, show(shown: boolean): void }} reconnect: follow `url()`
 *   anew (its filters changed); show: whether the part of the page it keeps is on screen
 */
export function liveReload(url, reload, { fallbackMs = 30_000, shown = true } = {}) {
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

  const onScreen = () => shown && !document.hidden;

  document.addEventListener('visibilitychange', () => {
    stop();
    if (onScreen()) start(); // its "open" reloads what the hidden tab missed
  });
  if (onScreen()) start();

  return {
    reconnect() {
      if (onScreen()) open();
    },
    show(now) {
      if (now === shown) return;
      shown = now;
      stop();
      if (onScreen()) start();
    }
  };
}
