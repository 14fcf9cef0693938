/**
 * Pure helpers of "Submit": deadlines, the order of assignments, the form
 * check and the receipt texts.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { filesText, normalizeSelection } from '../files/selection';
import { durationText, formatBytes } from '../format';
import { IAssignment, ISubmission } from '../apiTypes';

/* ------------------------------------------------------------ assignments */

/** Where an assignment stands. */
export type DeadlineState =
  /** Open, deadline ahead (more than a day). */
  | 'open'
  /** Open, deadline within a day. */
  | 'soon'
  /** Open, no deadline. */
  | 'no-deadline'
  /** Open although the deadline passed: late submissions accepted. */
  | 'late'
  /** No more submissions. */
  | 'closed';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The deadline's time, or null when there is none (or it cannot be read). */
function deadlineTime(assignment: IAssignment): number | null {
  if (!assignment.deadline) {
    return null;
  }
  const t = Date.parse(assignment.deadline);
  return Number.isNaN(t) ? null : t;
}

/** Where an assignment stands at `now`. */
export function deadlineState(
  assignment: IAssignment,
  now: number
): DeadlineState {
  if (!assignment.open) {
    return 'closed';
  }
  const deadline = deadlineTime(assignment);
  if (deadline === null) {
    return 'no-deadline';
  }
  if (deadline <= now) {
    return 'late';
  }
  return deadline - now <= DAY_MS ? 'soon' : 'open';
}

/**
 * The deadline in words: "due in 2 days 3 h", "no deadline",
 * "late submissions accepted (deadline passed 3 h ago)", "closed".
 */
export function deadlineText(
  assignment: IAssignment,
  now: number,
  trans: TranslationBundle
): string {
  const deadline = deadlineTime(assignment);
  const state = deadlineState(assignment, now);
  const since = () => durationText((now - (deadline as number)) / 1000, trans);
  switch (state) {
    case 'closed':
      return deadline !== null && deadline <= now
        ? trans.__('closed (deadline passed %1 ago)', since())
        : trans.__('closed');
    case 'no-deadline':
      return trans.__('no deadline');
    case 'late':
      return assignment.allow_late
        ? trans.__(
            'late submissions accepted (deadline passed %1 ago)',
            since()
          )
        : trans.__('the deadline has passed');
    default:
      return trans.__(
        'due in %1',
        durationText(((deadline as number) - now) / 1000, trans)
      );
  }
}

/** "not submitted yet", "1 submission", "3 submissions". */
export function submissionCountText(
  count: number,
  trans: TranslationBundle
): string {
  if (count <= 0) {
    return trans.__('not submitted yet');
  }
  return trans._n('%1 submission', '%1 submissions', count);
}

/**
 * The order the Submit dialog and the Course panel list assignments in: open
 * ones first (the nearest deadline first, then those without one, then those
 * past the deadline that still take late submissions), closed ones last (the
 * most recent first).
 */
export function orderAssignments(
  assignments: ReadonlyArray<IAssignment>,
  now: number
): IAssignment[] {
  const rank = (a: IAssignment): number => {
    switch (deadlineState(a, now)) {
      case 'soon':
      case 'open':
        return 0;
      case 'no-deadline':
        return 1;
      case 'late':
        return 2;
      default:
        return 3;
    }
  };
  return assignments
    .map((a, index) => ({ a, index, rank: rank(a), t: deadlineTime(a) }))
    .sort((x, y) => {
      if (x.rank !== y.rank) {
        return x.rank - y.rank;
      }
      if (x.t !== y.t) {
        if (x.t === null) {
          return 1;
        }
        if (y.t === null) {
          return -1;
        }
        return x.rank === 3 ? y.t - x.t : x.t - y.t;
      }
      return (
        (x.a.title || x.a.name).localeCompare(y.a.title || y.a.name) ||
        x.index - y.index
      );
    })
    .map(r => r.a);
}

/** The assignment the Submit dialog starts with: the one asked for, or the first open one. */
export function initialAssignment(
  ordered: ReadonlyArray<IAssignment>,
  requestedId: number | null
): IAssignment | null {
  const requested = ordered.find(a => a.id === requestedId);
  if (requested) {
    return requested;
  }
  return ordered.find(a => a.open) ?? null;
}

/** A sentence saying why the submission cannot be sent, or null. */
export function validateSubmission(
  assignment: IAssignment | null,
  paths: ReadonlyArray<string>,
  trans: TranslationBundle
): string | null {
  if (!assignment) {
    return trans.__('Choose an assignment.');
  }
  if (!assignment.open) {
    return trans.__(
      '"%1" is closed: it takes no more submissions.',
      assignment.title || assignment.name
    );
  }
  if (normalizeSelection(paths).length === 0) {
    return trans.__('Choose at least one file to submit.');
  }
  return null;
}

/**
 * 1 → "1st", 2 → "2nd", 11 → "11th", 23 → "23rd" (each suffix a sentence of
 * its own, so a language can put "%1." for all of them).
 */
export function ordinal(n: number, trans: TranslationBundle): string {
  const mod100 = n % 100;
  if (mod100 >= 11 && mod100 <= 13) {
    return trans.__('%1th', n);
  }
  switch (n % 10) {
    case 1:
      return trans.__('%1st', n);
    case 2:
      return trans.__('%1nd', n);
    case 3:
      return trans.__('%1rd', n);
    default:
      return trans.__('%1th', n);
  }
}

/** A content hash shortened for people: no "sha256:" prefix, 12 characters. */
export function shortHash(hash: string): string {
  const bare = hash.includes(':') ? hash.slice(hash.indexOf(':') + 1) : hash;
  return bare.slice(0, 12);
}

/** One line of the receipt. */
export interface IReceiptRow {
  key: string;
  label: string;
  value: string;
}

/** The receipt's lines (the time written by `formatTime`, e.g. toLocaleString). */
export function receiptRows(
  receipt: ISubmission,
  formatTime: (iso: string) => string,
  trans: TranslationBundle
): IReceiptRow[] {
  return [
    {
      key: 'assignment',
      label: trans.__('Assignment'),
      value: receipt.assignment
    },
    {
      key: 'number',
      label: trans.__('Submission'),
      value: trans.__('%1 submission', ordinal(receipt.number, trans))
    },
    {
      key: 'time',
      label: trans.__('Received'),
      value: formatTime(receipt.submitted_at)
    },
    {
      key: 'late',
      label: trans.__('Deadline'),
      value: receipt.late
        ? trans.__('Late (after the deadline)')
        : trans.__('On time')
    },
    {
      key: 'files',
      label: trans.__('Files'),
      value: trans.__(
        '%1, %2',
        filesText(receipt.files, trans),
        formatBytes(receipt.bytes)
      )
    },
    {
      key: 'hash',
      label: trans.__('Content hash'),
      value: shortHash(receipt.content_hash)
    }
  ];
}

/** The notification after a submission. */
export function receiptSummary(
  receipt: ISubmission,
  trans: TranslationBundle
): string {
  const args = [
    receipt.assignment,
    ordinal(receipt.number, trans),
    filesText(receipt.files, trans),
    formatBytes(receipt.bytes),
    shortHash(receipt.content_hash)
  ];
  return receipt.late
    ? trans.__(
        'Submitted to %1: your %2 submission, late, %3, %4 (hash %5).',
        ...args
      )
    : trans.__(
        'Submitted to %1: your %2 submission, %3, %4 (hash %5).',
        ...args
      );
}
