// @ts-check
// The Monitoring page's number and time formatting: plain functions from a figure to its
// text, shared by the charts, the tables and the summary, kept apart from any DOM work.
import { formatMemory } from './common.js';

export function round(value, digits = 1) {
  return value === null || value === undefined ? '—' : (+value.toFixed(digits)).toLocaleString();
}

export function percent(value) {
  return value === null || value === undefined ? '—' : `${round(value, 0)}%`;
}

export function clock(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

export function clockSeconds(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function amount(value) {
  if (value === null || value === undefined) return '—';
  return value > 0 && value < 0.01 ? '<0.01' : round(value, 2);
}

/** Small figures keep two significant digits (0.0042 kWh), larger ones one decimal. */
export function figure(value) {
  if (!value) return '0';
  return value < 1 ? String(+value.toPrecision(2)) : round(value, 1);
}

export function cores(value) {
  return `${amount(value)} ${value === 1 ? 'core' : 'cores'}`;
}

export function bytes(value) {
  return value ? formatMemory(value) : '0';
}
