/**
 * The idle countdown's words and figures, all from one answer of the culler
 * (`GET cgu-lab/culling`, which reads the kernels when asked): how long the
 * notebook has been idle and when it stops, both measured on the server's
 * clock and counted on locally, so the notification and the status bar can
 * never disagree ("idle for 4 minutes … stopped in 1 minute" beside "0:17").
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ICullingStatus } from '../apiTypes';

/** Milliseconds to add to the local clock to read the server's (0 when unknown). */
export function serverSkew(status: ICullingStatus, localNow: number): number {
  const server = status.now ? Date.parse(status.now) : NaN;
  return Number.isNaN(server) ? 0 : server - localNow;
}

/** Seconds until the announced stop at `serverNow`; null when none is ahead. */
export function secondsLeft(
  status: ICullingStatus,
  serverNow: number
): number | null {
  if (!status.stop_at) {
    return null;
  }
  const stop = Date.parse(status.stop_at);
  return Number.isNaN(stop) ? null : Math.max(0, (stop - serverNow) / 1000);
}

/** How long the notebook has been idle at `serverNow`; null when it is not idle. */
export function idleSecondsAt(
  status: ICullingStatus,
  serverNow: number
): number | null {
  if (status.idle_seconds === null || status.idle_seconds === undefined) {
    return null;
  }
  const asked = status.now ? Date.parse(status.now) : NaN;
  const since = Number.isNaN(asked) ? 0 : Math.max(0, serverNow - asked) / 1000;
  return status.idle_seconds + since;
}

/** "less than a minute", "1 minute", "4 minutes": whole minutes gone by. */
export function minutesText(seconds: number, trans: TranslationBundle): string {
  const minutes = Math.floor(Math.max(0, seconds) / 60);
  if (minutes < 1) {
    return trans.__('less than a minute');
  }
  return trans._n('%1 minute', '%1 minutes', minutes);
}

/** "in less than a minute", "in 1 minute", "in 10 minutes" (to the nearest minute). */
export function whenText(seconds: number, trans: TranslationBundle): string {
  if (seconds < 60) {
    return trans.__('in less than a minute');
  }
  const minutes = Math.max(1, Math.round(seconds / 60));
  return trans._n('in %1 minute', 'in %1 minutes', minutes);
}

/** 5, 0.5: a limit as the admin typed it. */
function limitValue(value: number): number {
  return Math.round(value * 10) / 10;
}

/**
 * The warning while a stop is counting down, or null when none is:
 * "This notebook has been idle for 4 minutes (limit 5 minutes) and stops in
 * less than a minute. Run something or press Keep running to keep it."
 */
export function idleWarningText(
  status: ICullingStatus,
  serverNow: number,
  trans: TranslationBundle
): string | null {
  const left = secondsLeft(status, serverNow);
  if (!status.enabled || status.action !== 'warn' || left === null) {
    return null;
  }
  const when = whenText(left, trans);
  const idle = idleSecondsAt(status, serverNow);
  if (status.cause === 'lifetime' || idle === null) {
    return trans.__(
      'This notebook has been %1 and stops %2. Save your work now; you can start it again afterwards.',
      status.reason.split(';')[0],
      when
    );
  }
  return trans.__(
    'This notebook has been idle for %1 (limit %2) and stops %3. Run something or press Keep running to keep it.',
    minutesText(idle, trans),
    trans._n('%1 minute', '%1 minutes', limitValue(status.idle_minutes)),
    when
  );
}

/** Why the culler leaves this notebook alone, for the tooltip; null when it may stop it. */
export function exemptText(
  status: ICullingStatus,
  trans: TranslationBundle
): string | null {
  if (status.exempt) {
    return trans.__('Never stopped for idleness: %1.', status.exempt);
  }
  if (status.persistent) {
    return trans.__('Never stopped for idleness: this notebook is persistent.');
  }
  return null;
}
