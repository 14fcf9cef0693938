// @ts-check
// The one way a portal page follows something that changes on the server by asking
// again (scores being computed, a training job's logs, the monitoring figures). The
// pages' own loops each dealt with errors (stop, or ask again at full speed), hidden
// tabs and a click racing the timer in their own way, or not at all. Kept apart from common.js so that it reads no page at
// import time (its tests run in Node: tests/pages/poll.test.mjs), as live.js is the one
// way to follow a page's event stream.

/**
 * @typedef {object} Poller
 * @property {() => Promise<void>} now run a round at once (a form was sent, a choice
 *   changed), then go on as the round says; resolves when it is over, never rejects
 * @property {(paused: boolean) => void} pause stop asking until unpaused; unpausing
 *   asks at once, as what was shown is then stale
 */

/**
 * Run `step` now when asked, then again every `everyMs` for as long as it wants more.
 *
 * - A round that returns `false` ends the polling (nothing left to follow: every entry
 *   is scored, the job ended); `now()` starts it again. Any other answer goes on.
 * - A round that throws is handed to `onError`, and the next is put off twice as long
 *   after each failure in a row (up to `maxMs`), so a server that is down or busy is
 *   not asked every second by every open page; a success goes back to `everyMs`.
 * - While the page is hidden, or once it is left, no round is put on the clock; when it
 *   is shown again (or restored from the back-forward cache) a round runs at once, since
 *   what it shows is stale.
 * - Rounds never overlap: `now()` during a round runs one more right after it.
 *
 * @param {() => Promise<unknown>} step loads and draws; false when there is nothing
 *   left to follow
 * @param {{ everyMs: number | (() => number), maxMs?: number, onError?: (error: any) => void }} options
 *   everyMs: the wait between rounds (a function when the server says how often);
 *   onError: shows the failure (by default only in the console, as a page's own
 *   messages say more)
 * @returns {Poller}
 */
export function poll(step, { everyMs, maxMs = 60_000, onError = error => console.warn('polling:', error) }) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** @type {Promise<void> | null} */
  let running = null;
  let again = false;
  let wanted = false;
  let paused = false;
  let left = false;
  let failures = 0;

  const interval = () => (typeof everyMs === 'function' ? everyMs() : everyMs);

  function cancel() {
    clearTimeout(timer);
    timer = undefined;
  }

  /** @param {number} ms */
  function schedule(ms) {
    cancel();
    if (wanted && !paused && !left && !document.hidden) timer = setTimeout(run, ms);
  }

  async function round() {
    try {
      wanted = (await step()) !== false;
      failures = 0;
      schedule(interval());
    } catch (error) {
      wanted = true;
      failures += 1;
      onError(error);
      schedule(Math.min(maxMs, interval() * 2 ** failures));
    }
  }

  function run() {
    cancel();
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await round();
      } while (again);
      running = null;
    })();
    return running;
  }

  const resume = () => {
    if (wanted && !paused && !left && !document.hidden) void run();
  };
  document.addEventListener('visibilitychange', () => (document.hidden ? cancel() : resume()));
  window.addEventListener('pagehide', () => {
    left = true;
    cancel();
  });
  window.addEventListener('pageshow', event => {
    left = false;
    if (event.persisted) resume();
  });

  return {
    now: run,
    pause(now) {
      paused = now;
      if (paused) cancel();
      else void run();
    }
  };
}
