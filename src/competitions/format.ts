/**
 * Pure helpers of "Submit to Competition": which file to start with, what to
 * say about an entry, and whether it is still waiting for its score.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

/** A competition as the lab sees it (the controller's CompetitionOut plus its page). */
export interface ICompetition {
  id: number;
  group: string;
  title: string;
  ends_at: string;
  metric_title: string;
  id_column: string;
  target_column: string;
  max_bytes: number;
  url: string;
  /** "code": the entry is a notebook the platform runs on hidden inputs. */
  kind?: 'predictions' | 'code';
}

/** The content type of an entry's body: a notebook for a code competition, else CSV. */
export function entryContentType(
  competition: ICompetition | undefined
): string {
  return competition?.kind === 'code' ? 'application/x-ipynb+json' : 'text/csv';
}

/**
 * The file to propose for a competition: a code competition takes a notebook (the
 * one given, else the open one); any other a CSV (the one given, see initialFile).
 */
export function fileFor(
  competition: ICompetition | undefined,
  given: string,
  notebook: string | null
): string {
  if (competition?.kind === 'code') {
    return /\.ipynb$/i.test(given) ? given : (notebook ?? '');
  }
  return initialFile(given);
}

/** An entry (the controller's CompetitionEntryOut). */
export interface ICompetitionEntry {
  id: number;
  competition_id: number;
  file_name: string;
  state: 'queued' | 'scoring' | 'scored' | 'failed' | 'error';
  message: string;
  public_score: number | null;
}

/** The file to propose: the one the command was given when it is a CSV, else none. */
export function initialFile(path: string | null): string {
  return path && /\.csv$/i.test(path) ? path : '';
}

/** Why the form cannot be sent, or null. */
export function validateEntry(
  competitionId: number | null,
  path: string,
  trans: TranslationBundle,
  kind: ICompetition['kind'] = 'predictions'
): string | null {
  if (competitionId === null) {
    return trans.__('Choose a competition.');
  }
  if (!path.trim()) {
    return trans.__(
      'Give the path of your predictions file (a CSV in this home).'
    );
  }
  if (kind === 'code' && !/\.ipynb$/i.test(path.trim())) {
    return trans.__(
      'This is a code competition: submit a notebook (.ipynb), which the platform runs on the hidden inputs.'
    );
  }
  return null;
}

/** Whether the scorer has yet to finish with the entry. */
export function isWaiting(entry: ICompetitionEntry): boolean {
  return entry.state === 'queued' || entry.state === 'scoring';
}

/** One sentence about an entry's outcome. */
export function entrySummary(
  entry: ICompetitionEntry,
  trans: TranslationBundle
): string {
  switch (entry.state) {
    case 'scored':
      return entry.public_score === null
        ? trans.__('Entry %1 is scored.', entry.id)
        : trans.__(
            'Entry %1 scored %2 on the public leaderboard.',
            entry.id,
            entry.public_score.toFixed(5)
          );
    case 'failed':
      return trans.__(
        'Entry %1 could not be scored: %2',
        entry.id,
        entry.message
      );
    case 'error':
      return trans.__('Entry %1: %2', entry.id, entry.message);
    default:
      return trans.__('Entry %1 is waiting for the scorer.', entry.id);
  }
}
