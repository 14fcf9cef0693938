/**
 * Pure helpers of the idle countdown: its label and how often to poll.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ICullingStatus } from '../apiTypes';

/* -------------------------------------------------------------- culling */

/** Minutes and seconds left until `stopAt`, e.g. "4:07"; "0:00" once passed. */
export function timeLeft(stopAt: string, now: number): string {
  const seconds = Math.max(0, Math.round((Date.parse(stopAt) - now) / 1000));
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${String(seconds % 60).padStart(2, '0')}`;
}

/**
 * The status-bar label of the idle countdown, or null when nothing is
 * announced: "Idle: stops in 4:07".
 */
export function cullingLabel(
  status: ICullingStatus,
  now: number,
  trans: TranslationBundle
): string | null {
  if (!status.enabled || status.action !== 'warn' || !status.stop_at) {
    return null;
  }
  return trans.__('Idle: stops in %1', timeLeft(status.stop_at, now));
}

/** The fastest the page asks the culler, and the slowest. */
const SOONEST = 5;
const LATEST = 30;

/**
 * How often to ask the culler: often while a stop is counting down, and in
 * time for a warning's window. Every 30 s alone could miss a warning shorter
 * than that (it comes at a culler's pass and ends with the stop), so an idle
 * notebook is asked again when its window opens (`idle_minutes -
 * warn_minutes`, less the idle time the answer gave), then every 5 s.
 */
export function cullingPollSeconds(status: ICullingStatus | null): number {
  if (status?.action === 'warn') {
    return SOONEST;
  }
  const idle = status?.idle_seconds;
  if (
    !status?.enabled ||
    status.persistent ||
    status.exempt ||
    !status.warn_minutes ||
    idle === null ||
    idle === undefined
  ) {
    return LATEST;
  }
  const untilWindow = (status.idle_minutes - status.warn_minutes) * 60 - idle;
  return Math.min(LATEST, Math.max(SOONEST, Math.ceil(untilWindow)));
}
