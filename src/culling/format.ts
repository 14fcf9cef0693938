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

/** How often to ask the culler: often while a stop is counting down. */
export function cullingPollSeconds(status: ICullingStatus | null): number {
  return status?.action === 'warn' ? 5 : 30;
}
