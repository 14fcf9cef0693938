/**
 * The one way the extension does something again and again: a
 * `@lumino/polling` Poll that stands by while the page is hidden (a tab in
 * the background asks the server nothing and repaints nothing) and is
 * disposed with the widget or model that owns it.
 *
 * - `pollFrequency` — asking the server: every `seconds`, backing off after
 *   failures (the factory rejects) up to `maxSeconds`.
 * - `repaintPoll` — repainting clocks (countdowns, "5 min ago") from what is
 *   already known; it never fails, so it never backs off.
 */
import type { IPoll } from '@lumino/polling';
import { Poll } from '@lumino/polling';

/**
 * How often to ask the server: every `seconds` (at least 1), backing off
 * after failures up to `maxSeconds` (or the interval when that is longer, as
 * a Poll refuses an interval above its maximum).
 */
export function pollFrequency(
  seconds: number,
  maxSeconds = 60
): IPoll.Frequency {
  const interval =
    Math.max(1, Number.isFinite(seconds) ? seconds : maxSeconds) * 1000;
  return {
    interval,
    backoff: true,
    max: Math.max(interval, maxSeconds * 1000)
  };
}

/**
 * A Poll that calls `repaint` every `seconds` while the page is visible,
 * once started (`start()` when its widget is shown, `stop()` when hidden).
 */
export function repaintPoll(
  name: string,
  seconds: number,
  repaint: () => void
): Poll {
  const interval = seconds * 1000;
  return new Poll({
    auto: false,
    factory: async () => repaint(),
    frequency: { interval, backoff: false, max: interval },
    name,
    standby: 'when-hidden'
  });
}
