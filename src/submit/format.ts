/**
 * Pure helpers of "Submit": deadlines, the order of assignments, the form
 * check and the receipt texts.
 */
import { durationText } from '../course/format';
import { filesText, normalizeSelection } from '../files/selection';
import { formatBytes } from '../format';
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
export function deadlineText(assignment: IAssignment, now: number): string {
  const deadline = deadlineTime(assignment);
  const state = deadlineState(assignment, now);
  switch (state) {
    case 'closed':
      return deadline !== null && deadline <= now
        ? `closed (deadline passed ${durationText((now - deadline) / 1000)} ago)`
        : 'closed';
    case 'no-deadline':
      return 'no deadline';
    case 'late':
      return assignment.allow_late
        ? `late submissions accepted (deadline passed ${durationText(
            (now - (deadline as number)) / 1000
          )} ago)`
        : 'the deadline has passed';
    default:
      return `due in ${durationText(((deadline as number) - now) / 1000)}`;
  }
}

/** "not submitted yet", "1 submission", "3 submissions". */
export function submissionCountText(count: number): string {
  if (count <= 0) {
    return 'not submitted yet';
  }
  return `${count} ${count === 1 ? 'submission' : 'submissions'}`;
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
  paths: ReadonlyArray<string>
): string | null {
  if (!assignment) {
    return 'Choose an assignment.';
  }
  if (!assignment.open) {
    return `"${assignment.title || assignment.name}" is closed: it takes no more submissions.`;
  }
  if (normalizeSelection(paths).length === 0) {
    return 'Choose at least one file to submit.';
  }
  return null;
}

/** 1 → "1st", 2 → "2nd", 11 → "11th", 23 → "23rd". */
export function ordinal(n: number): string {
  const mod100 = n % 100;
  if (mod100 >= 11 && mod100 <= 13) {
    return `${n}th`;
  }
  switch (n % 10) {
    case 1:
      return `${n}st`;
    case 2:
      return `${n}nd`;
    case 3:
      return `${n}rd`;
    default:
      return `${n}th`;
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
  formatTime: (iso: string) => string
): IReceiptRow[] {
  return [
    { key: 'assignment', label: 'Assignment', value: receipt.assignment },
    {
      key: 'number',
      label: 'Submission',
      value: `${ordinal(receipt.number)} submission`
    },
    {
      key: 'time',
      label: 'Received',
      value: formatTime(receipt.submitted_at)
    },
    {
      key: 'late',
      label: 'Deadline',
      value: receipt.late ? 'Late (after the deadline)' : 'On time'
    },
    {
      key: 'files',
      label: 'Files',
      value: `${filesText(receipt.files)}, ${formatBytes(receipt.bytes)}`
    },
    {
      key: 'hash',
      label: 'Content hash',
      value: shortHash(receipt.content_hash)
    }
  ];
}

/** The notification after a submission. */
export function receiptSummary(receipt: ISubmission): string {
  return (
    `Submitted to ${receipt.assignment}: your ${ordinal(receipt.number)} ` +
    `submission${receipt.late ? ', late' : ''}, ${filesText(receipt.files)}, ` +
    `${formatBytes(receipt.bytes)} (hash ${shortHash(receipt.content_hash)}).`
  );
}
