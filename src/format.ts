/**
 * Pure helpers shared by several features: byte and number figures, share
 * URLs, durations and countdowns. No DOM and no server here, so all of it is
 * unit-tested; the words come from the caller's translation bundle.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

export const KIB = 1024;

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** The binary unit index that suits a byte count (0 = B, 3 = GiB). */
function unitIndex(bytes: number): number {
  let index = 0;
  let value = Math.abs(bytes);
  while (value >= KIB && index < UNITS.length - 1) {
    value /= KIB;
    index += 1;
  }
  return index;
}

/** A number in a unit: one decimal below 100, none above. */
function scaled(bytes: number, index: number): string {
  const value = bytes / Math.pow(KIB, index);
  if (index === 0) {
    return String(Math.round(value));
  }
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(1);
}

/** A byte count in binary units: "0 B", "1.5 KiB", "800.0 MiB", "2.0 GiB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) {
    return '–';
  }
  const index = unitIndex(bytes);
  return `${scaled(bytes, index)} ${UNITS[index]}`;
}

/**
 * A used/limit pair in the unit of the larger one: "0.8/2.0 GiB"; just the
 * used figure when there is no limit.
 */
export function formatBytePair(used: number, limit: number | null): string {
  if (limit === null || !Number.isFinite(limit)) {
    return formatBytes(used);
  }
  const index = unitIndex(Math.max(used, limit));
  return `${scaled(used, index)}/${scaled(limit, index)} ${UNITS[index]}`;
}

/** A percentage rounded to a whole number: "12%"; "–" when unknown. */
export function formatPercent(percent: number | null | undefined): string {
  if (percent === null || percent === undefined || !Number.isFinite(percent)) {
    return '–';
  }
  return `${Math.round(percent)}%`;
}

/** A number with at most `digits` decimals and no trailing zeros. */
export function formatNumber(value: number, digits = 2): string {
  const factor = Math.pow(10, digits);
  return String(Math.round(value * factor) / factor);
}

/**
 * CPU cores as people say them: "1 CPU", "0.5 CPU", "4 CPUs" (a fraction is
 * singular, so no `_n`, whose English plural takes any n but 1).
 */
export function formatCores(cores: number, trans: TranslationBundle): string {
  const n = formatNumber(cores);
  return cores > 1 ? trans.__('%1 CPUs', n) : trans.__('%1 CPU', n);
}

/** Millicores as CPUs: 1500 → "1.5 CPUs". */
export function formatMilliCores(
  milli: number,
  trans: TranslationBundle
): string {
  return formatCores(milli / 1000, trans);
}

/** A value as a percentage of a limit, clamped to 0-100; null without a limit. */
export function percentOf(used: number, limit: number | null): number | null {
  if (limit === null || !Number.isFinite(limit) || limit <= 0) {
    return null;
  }
  return Math.min(100, Math.max(0, (used / limit) * 100));
}

/**
 * The link a grantee opens: the share's `url` (an absolute path) made absolute
 * with the page's origin; an http(s) URL is kept as it is.
 */
export function absoluteShareUrl(url: string, origin: string): string {
  if (/^https?:\/\//i.test(url)) {
    return url;
  }
  const base = origin.replace(/\/+$/, '');
  const path = url.startsWith('/') ? url : `/${url}`;
  return `${base}${path}`;
}

/** "less than a minute", "29 min", "1 h 5 min", "2 days 3 h". */
export function durationText(
  seconds: number,
  trans: TranslationBundle
): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) {
    return trans.__('less than a minute');
  }
  const minutes = Math.floor(s / 60);
  if (minutes < 60) {
    return trans.__('%1 min', minutes);
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    const rest = minutes % 60;
    return rest
      ? trans.__('%1 h %2 min', hours, rest)
      : trans.__('%1 h', hours);
  }
  const days = Math.floor(hours / 24);
  const restHours = hours % 24;
  return restHours
    ? trans._n('%1 day %2 h', '%1 days %2 h', days, restHours)
    : trans._n('%1 day', '%1 days', days);
}

/**
 * How long until a share ends: "no end", "expired",
 * "expires in less than a minute", "expires in 29 min",
 * "expires in 1 h 5 min", "expires in 2 days 3 h".
 */
export function countdownText(
  expiresAt: string | null,
  now: number,
  trans: TranslationBundle
): string {
  if (expiresAt === null || expiresAt === '') {
    return trans.__('no end');
  }
  const end = Date.parse(expiresAt);
  if (Number.isNaN(end)) {
    return trans.__('unknown expiry');
  }
  const seconds = Math.floor((end - now) / 1000);
  if (seconds <= 0) {
    return trans.__('expired');
  }
  return trans.__('expires in %1', durationText(seconds, trans));
}

/** A polling interval from a setting: a finite number, at least `min`. */
export function intervalSeconds(
  value: unknown,
  fallback: number,
  min: number
): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n)) {
    return Math.max(min, fallback);
  }
  return Math.max(min, n);
}
