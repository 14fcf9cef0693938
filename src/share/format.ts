/**
 * Pure helpers of the Share dialog and the Shared-with-me list: expiry
 * choices, access and scope labels, grantee suggestions.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { countdownText } from '../format';
import { IDirectory, IShare, ShareAccess } from '../apiTypes';

/* ------------------------------------------------------------------ sharing */

/** One choice of the share dialog's "Expires" list. */
export interface IExpiryChoice {
  id: string;
  label: string;
  /** null = the share does not end. */
  minutes: number | null;
}

/**
 * The expiry choices, in the order the dialog offers them (the ids are those
 * of the `defaultExpiry` setting).
 */
export function expiryChoices(trans: TranslationBundle): IExpiryChoice[] {
  return [
    { id: 'none', label: trans.__('No end'), minutes: null },
    { id: '30m', label: trans.__('30 minutes'), minutes: 30 },
    { id: '1h', label: trans.__('1 hour'), minutes: 60 },
    { id: '2h', label: trans.__('2 hours'), minutes: 120 },
    { id: '1d', label: trans.__('1 day'), minutes: 24 * 60 },
    { id: '1w', label: trans.__('1 week'), minutes: 7 * 24 * 60 }
  ];
}

/**
 * The `expires_in_minutes` of an expiry choice. An unknown id is an error, not
 * "no end": a typo must never make a share last forever.
 */
export function expiryMinutes(
  choiceId: string,
  trans: TranslationBundle
): number | null {
  const choice = expiryChoices(trans).find(c => c.id === choiceId);
  if (!choice) {
    throw new Error(trans.__('Unknown expiry choice "%1".', choiceId));
  }
  return choice.minutes;
}

/** "read-only" or "can edit". */
export function accessLabel(
  access: ShareAccess,
  trans: TranslationBundle
): string {
  return access === 'edit' ? trans.__('can edit') : trans.__('read-only');
}

/** What a share covers: "whole notebook" or the file's path. */
export function scopeLabel(path: string, trans: TranslationBundle): string {
  return path ? path : trans.__('whole notebook');
}

/** A suggestion of the share dialog's grantee search. */
export interface IGranteeSuggestion {
  kind: 'user' | 'group';
  name: string;
  display_name: string;
  /** What the list shows: "Bob Lee (bob) · student", "Class A · group". */
  label: string;
}

/** Whether the directory should be asked: from 2 characters on. */
export function shouldSearch(query: string): boolean {
  return query.trim().length >= 2;
}

/**
 * The suggestions to show for a directory answer: people then groups, without
 * the ones already picked and without the user themself, those whose name or
 * display name starts with the query first, at most `limit`.
 */
export function granteeSuggestions(
  directory: IDirectory,
  query: string,
  picked: ReadonlyArray<{ kind: 'user' | 'group'; name: string }>,
  selfName: string | null,
  trans: TranslationBundle,
  limit = 8
): IGranteeSuggestion[] {
  const taken = new Set(picked.map(p => `${p.kind}:${p.name}`));
  const q = query.trim().toLowerCase();
  const all: IGranteeSuggestion[] = [
    ...(directory.users ?? [])
      .filter(u => u.name !== selfName)
      .map(u => {
        const who = trans.__('%1 (%2)', u.display_name || u.name, u.name);
        return {
          kind: 'user' as const,
          name: u.name,
          display_name: u.display_name || u.name,
          label: u.role ? trans.__('%1 · %2', who, u.role) : who
        };
      }),
    ...(directory.groups ?? []).map(g => ({
      kind: 'group' as const,
      name: g.name,
      display_name: g.display_name || g.name,
      label: trans.__('%1 · group', g.display_name || g.name)
    }))
  ].filter(s => !taken.has(`${s.kind}:${s.name}`));
  const starts = (s: IGranteeSuggestion): boolean =>
    q.length > 0 &&
    (s.name.toLowerCase().startsWith(q) ||
      s.display_name.toLowerCase().startsWith(q));
  // A stable sort: the server's order is kept within each rank.
  const ranked = all
    .map((s, index) => ({ s, index, rank: starts(s) ? 0 : 1 }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(r => r.s);
  return ranked.slice(0, Math.max(0, limit));
}

/**
 * What the dialog says once shared: "Shared hw1.ipynb with Bob Lee
 * (read-only, no end). Send them the link."
 */
export function sharedText(
  path: string,
  who: string,
  access: ShareAccess,
  expiresAt: string | null,
  now: number,
  trans: TranslationBundle
): string {
  return trans.__(
    'Shared %1 with %2 (%3, %4). Send them the link.',
    path ? path : trans.__('the whole notebook'),
    who,
    accessLabel(access, trans),
    countdownText(expiresAt, now, trans)
  );
}

/** What the status line says, and whether it is a problem. */
export interface IShareStatus {
  text: string;
  kind: 'info' | 'error';
}

/**
 * What the dialog says once it asked for a share with each chosen grantee:
 * who it is shared with, then what failed (`errors`, one sentence each).
 */
export function shareOutcome(
  path: string,
  access: ShareAccess,
  done: ReadonlyArray<Pick<IShare, 'grantee' | 'expires_at'>>,
  errors: ReadonlyArray<string>,
  now: number,
  trans: TranslationBundle
): IShareStatus {
  if (done.length === 0) {
    return { text: errors.join(' '), kind: 'error' };
  }
  const last = done[done.length - 1];
  const who = done.map(s => s.grantee.display_name).join(', ');
  const summary = sharedText(path, who, access, last.expires_at, now, trans);
  return errors.length
    ? { text: trans.__('%1 %2', summary, errors.join(' ')), kind: 'error' }
    : { text: summary, kind: 'info' };
}

/**
 * The path a share covers for the dialog's "what to share" choice.
 */
export function sharePath(
  scope: 'notebook' | 'file',
  filePath: string | null
): string {
  return scope === 'file' && filePath ? filePath : '';
}

/* --------------------------------------------------------- shared with me */

/** The state of a shared notebook in words. */
export function notebookStateLabel(
  state: string,
  trans: TranslationBundle
): string {
  switch (state) {
    case 'running':
      return trans.__('running');
    case 'stopped':
      return trans.__('stopped');
    case 'starting':
      return trans.__('starting…');
    case 'stopping':
      return trans.__('stopping…');
    default:
      return state;
  }
}
