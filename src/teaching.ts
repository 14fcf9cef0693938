/**
 * Pure helpers of the teaching workflow (templates, submissions, the Course
 * panel, the live view): path selections of the file picker and their sizes,
 * form checks and request bodies, deadline and receipt texts, the grouping of
 * the Course panel, and when a live view reloads a document. No DOM and no
 * server here, so all of it is unit-tested.
 */
import {
  cpuQuantity,
  formatBytes,
  IResizeForm,
  memoryQuantity,
  resizeFormFrom,
  validateResize
} from './format';
import {
  IAssignment,
  IBroadcast,
  ICourseGroup,
  ICourses,
  IDeployment,
  IFileEntry,
  ISubmission,
  ITemplateOptions,
  ITemplateRequest,
  ITemplateSummary,
  TemplateVisibility
} from './tokens';

/* ------------------------------------------------------------------ paths */

/**
 * A path of the home in one spelling: no leading "./" or "/", no trailing or
 * doubled "/", no "." parts; '' for the home itself or for anything that
 * climbs out of it (a ".." part).
 */
export function normalizePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.replace(/\\/g, '/').split('/')) {
    const trimmed = part.trim() === '' ? '' : part;
    if (trimmed === '' || trimmed === '.') {
      continue;
    }
    if (trimmed === '..') {
      return '';
    }
    parts.push(trimmed);
  }
  return parts.join('/');
}

/** The folders above a path, outermost first: "a/b/c" → ["a", "a/b"]. */
export function ancestorsOf(path: string): string[] {
  const parts = normalizePath(path).split('/');
  const result: string[] = [];
  for (let i = 1; i < parts.length; i++) {
    result.push(parts.slice(0, i).join('/'));
  }
  return result;
}

/** Whether `path` lies inside the folder `folder` (not the folder itself). */
export function isInside(path: string, folder: string): boolean {
  return folder !== '' && path.startsWith(`${folder}/`);
}

/**
 * A selection in one spelling: every path normalised, no duplicates, nothing
 * that a chosen folder already covers, sorted. The home itself ('') and paths
 * that climb out of it are dropped.
 */
export function normalizeSelection(paths: ReadonlyArray<string>): string[] {
  const unique = Array.from(
    new Set(paths.map(normalizePath).filter(p => p !== ''))
  ).sort();
  return unique.filter(p => !unique.some(other => isInside(p, other)));
}

/** Whether a path is chosen, itself or through a folder above it. */
export function isCovered(
  path: string,
  selection: ReadonlyArray<string>
): boolean {
  const target = normalizePath(path);
  return selection.some(p => p === target || isInside(target, p));
}

/** What a checkbox of the picker shows. */
export type CheckState = 'checked' | 'partial' | 'unchecked';

/** Checked when covered, partial when something inside a folder is chosen. */
export function checkState(
  path: string,
  selection: ReadonlyArray<string>
): CheckState {
  if (isCovered(path, selection)) {
    return 'checked';
  }
  const target = normalizePath(path);
  return selection.some(p => isInside(p, target)) ? 'partial' : 'unchecked';
}

/** Choose a path: a folder covers (and replaces) what was chosen inside it. */
export function selectPath(
  selection: ReadonlyArray<string>,
  path: string
): string[] {
  return normalizeSelection([...selection, path]);
}

/** The loaded listings of the picker, by folder. */
export type ChildrenOf = (
  folder: string
) => ReadonlyArray<IFileEntry> | undefined;

/**
 * Leave a path out. When a folder above it was chosen, that folder is
 * replaced by its other entries (down to the path), so the rest stays chosen;
 * excluded entries are not added. If a listing on the way is not loaded, the
 * selection is returned as it was (the picker only shows loaded entries).
 */
export function deselectPath(
  selection: ReadonlyArray<string>,
  path: string,
  childrenOf: ChildrenOf,
  isExcluded: (entry: IFileEntry) => boolean = () => false
): string[] {
  const target = normalizePath(path);
  const current = normalizeSelection(selection);
  if (!target) {
    return current;
  }
  const kept = current.filter(p => p !== target && !isInside(p, target));
  const chain = [...ancestorsOf(target), target];
  const coverIndex = chain.findIndex(a => kept.includes(a));
  if (coverIndex < 0) {
    return kept;
  }
  const result = kept.filter(p => p !== chain[coverIndex]);
  for (let i = coverIndex; i < chain.length - 1; i++) {
    const children = childrenOf(chain[i]);
    if (!children) {
      return current;
    }
    for (const child of children) {
      const childPath = normalizePath(child.path);
      if (childPath !== chain[i + 1] && !isExcluded(child)) {
        result.push(childPath);
      }
    }
  }
  return normalizeSelection(result);
}

/* --------------------------------------------------------------- patterns */

/** A glob pattern as a regular expression: `*`, `?`, `[abc]`, `[!abc]`. */
export function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') {
      source += '.*';
    } else if (c === '?') {
      source += '.';
    } else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) {
        source += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('!');
      if (negate) {
        body = body.slice(1);
      }
      source += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = end;
    } else {
      source += c.replace(/[.+^${}()|\\/\]]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

/**
 * Whether a pattern leaves an entry out, as the server decides it
 * (`cgu_lab.core.selection.excluded`): the pattern is matched against the
 * path from the home and against each of its parts, so ".ipynb_checkpoints"
 * and "*.pyc" match anywhere and "data/raw/*" matches below data/raw.
 */
export function matchesPattern(
  pattern: string,
  entry: Pick<IFileEntry, 'path'>
): boolean {
  const p = pattern.trim();
  if (!p) {
    return false;
  }
  const re = globToRegExp(p);
  const path = normalizePath(entry.path);
  return re.test(path) || path.split('/').some(part => re.test(part));
}

/**
 * Why an entry is left out, or null when it is not.
 *
 * @param patterns the patterns the request sends (the template dialog's
 *   editable list), or null when the platform's own patterns apply (a
 *   submission): then the server's `excluded` flag decides.
 * @param defaults the platform's patterns (`excluded_patterns`).
 */
export function exclusionReason(
  entry: IFileEntry,
  patterns: ReadonlyArray<string> | null,
  defaults: ReadonlyArray<string> = []
): string | null {
  if (patterns === null) {
    if (!entry.excluded) {
      return null;
    }
    const hit = defaults.find(p => matchesPattern(p, entry));
    return hit ? `excluded: matches "${hit}"` : 'excluded by the platform';
  }
  const hit = patterns.find(p => matchesPattern(p, entry));
  if (hit) {
    return `excluded: matches "${hit}"`;
  }
  if (entry.excluded && defaults.every(d => patterns.includes(d))) {
    return 'excluded by the platform';
  }
  return null;
}

/**
 * Add a pattern to the list: trimmed, not empty, not twice. Returns the new
 * list, or a sentence saying why it cannot be added.
 */
export function addPattern(
  patterns: ReadonlyArray<string>,
  text: string
): string[] | string {
  const pattern = text.trim();
  if (!pattern) {
    return 'Type a pattern first, e.g. *.pyc or data/raw.';
  }
  if (pattern.split('/').includes('..')) {
    return 'A pattern cannot contain "..".';
  }
  if (patterns.includes(pattern)) {
    return `"${pattern}" is already in the list.`;
  }
  return [...patterns, pattern];
}

/* ----------------------------------------------------------------- totals */

/** What the picker knows about the home so far. */
export interface IPickerIndex {
  /** The entry at a path, once its folder's listing is loaded. */
  entry(path: string): IFileEntry | undefined;
  /** A folder's loaded listing. */
  children: ChildrenOf;
}

/** The size of a selection. */
export interface ISelectionTotals {
  bytes: number;
  files: number;
  /** Chosen paths whose folder is not loaded yet (size unknown). */
  unknown: string[];
  /** Chosen paths that are themselves excluded (not sent, not counted). */
  excluded: string[];
}

/**
 * Add up a selection. A chosen folder counts what it contains: its loaded
 * entries one by one (leaving out the excluded ones), or the server's total
 * when it is not loaded.
 */
export function selectionTotals(
  selection: ReadonlyArray<string>,
  index: IPickerIndex,
  isExcluded: (entry: IFileEntry) => boolean
): ISelectionTotals {
  const totals: ISelectionTotals = {
    bytes: 0,
    files: 0,
    unknown: [],
    excluded: []
  };
  const add = (entry: IFileEntry): void => {
    const children =
      entry.type === 'directory' ? index.children(entry.path) : undefined;
    if (children) {
      for (const child of children) {
        if (!isExcluded(child)) {
          add(child);
        }
      }
      return;
    }
    totals.bytes += Math.max(0, entry.size || 0);
    totals.files += Math.max(0, entry.files || 0);
  };
  for (const path of normalizeSelection(selection)) {
    const entry = index.entry(path);
    if (!entry) {
      totals.unknown.push(path);
    } else if (isExcluded(entry)) {
      totals.excluded.push(path);
    } else {
      add(entry);
    }
  }
  return totals;
}

/** The paths to send: the selection without the entries that are excluded. */
export function effectivePaths(
  selection: ReadonlyArray<string>,
  index: IPickerIndex,
  isExcluded: (entry: IFileEntry) => boolean
): string[] {
  return normalizeSelection(selection).filter(path => {
    const entry = index.entry(path);
    return !entry || !isExcluded(entry);
  });
}

/** Whether a size is over a limit (a limit of 0 or less means none). */
export function isOverLimit(bytes: number, maxBytes: number | null): boolean {
  return maxBytes !== null && maxBytes > 0 && bytes > maxBytes;
}

/** "1 file", "3 files". */
export function filesText(count: number): string {
  return `${count} ${count === 1 ? 'file' : 'files'}`;
}

/**
 * The picker's summary line: "Selected: 3 files, 1.2 MiB of 100.0 MiB allowed",
 * with what is not known yet.
 */
export function totalsText(
  totals: ISelectionTotals,
  maxBytes: number | null
): string {
  const limit =
    maxBytes !== null && maxBytes > 0
      ? ` of ${formatBytes(maxBytes)} allowed`
      : '';
  const unknown = totals.unknown.length
    ? ` (+ ${totals.unknown.length} not measured yet)`
    : '';
  return (
    `Selected: ${filesText(totals.files)}, ${formatBytes(totals.bytes)}` +
    `${limit}${unknown}`
  );
}

/** The warning when a selection is too large; null when it fits. */
export function overLimitText(
  bytes: number,
  maxBytes: number | null,
  what: string
): string | null {
  if (!isOverLimit(bytes, maxBytes)) {
    return null;
  }
  return (
    `Too large: the selection is ${formatBytes(bytes)}, over the ` +
    `${formatBytes(maxBytes as number)} limit of ${what}. Leave out large ` +
    'files (data sets, checkpoints, outputs) or add an excluded pattern.'
  );
}

/* -------------------------------------------------------------- templates */

/** What the Save-as-template dialog's form holds. */
export interface ITemplateForm {
  name: string;
  displayName: string;
  description: string;
  versionLabel: string;
  visibility: TemplateVisibility;
  /** The group, for 'group' visibility; '' when none is chosen. */
  group: string;
  environment: string;
  resources: IResizeForm;
  paths: string[];
  excluded: string[];
}

/** A template name from any text: "Intro to ML (2026)" → "intro-to-ml-2026". */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/g, '');
}

/** The rule a template name follows. */
export const TEMPLATE_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The form's starting values from the options. */
export function templateFormDefaults(
  options: ITemplateOptions,
  displayName = ''
): ITemplateForm {
  const d = options.defaults;
  return {
    name: slugify(displayName),
    displayName,
    description: '',
    versionLabel: '',
    visibility: 'private',
    group: options.groups[0]?.name ?? '',
    environment:
      d.environment ||
      (options.environments[0] ? options.environments[0].name : ''),
    resources: resizeFormFrom({
      cpu_milli: d.cpu_milli,
      memory: d.memory,
      gpu_type: d.gpu_type,
      gpus: d.gpus
    }),
    paths: [],
    excluded: []
  };
}

/**
 * What saving under a name makes: a new template, or the next version of one
 * of mine.
 */
export function templateVersionNote(
  templates: ReadonlyArray<ITemplateSummary>,
  name: string
): string {
  const existing = templates.find(t => t.name === name);
  if (!existing) {
    return 'A new template.';
  }
  const title = existing.display_name || existing.name;
  return (
    `Version ${existing.versions + 1} of "${title}" (it has ` +
    `${existing.versions} ${existing.versions === 1 ? 'version' : 'versions'}).`
  );
}

/** What is wrong with a template name, or null when it is fine. */
export function templateNameProblem(name: string): string | null {
  if (TEMPLATE_NAME_PATTERN.test(name)) {
    return null;
  }
  return (
    'The name may use lower-case letters, digits and "-" (e.g. ' +
    '"ml-intro"), starts and ends with a letter or digit, at most 63 characters.'
  );
}

/** A sentence saying what is wrong with the form, or null when it can be sent. */
export function validateTemplateForm(form: ITemplateForm): string | null {
  if (!form.displayName.trim()) {
    return 'Give the template a display name, e.g. "Intro to ML".';
  }
  const nameProblem = templateNameProblem(form.name);
  if (nameProblem) {
    return nameProblem;
  }
  if (form.visibility === 'group' && !form.group) {
    return 'Choose the group that may use the template, or another visibility.';
  }
  if (!form.environment) {
    return 'Choose an environment.';
  }
  const resources = validateResize(form.resources);
  if (resources) {
    return resources;
  }
  if (normalizeSelection(form.paths).length === 0) {
    return 'Choose at least one file or folder of your home to include.';
  }
  return null;
}

/** The `POST templates` body for a valid form. */
export function templateRequest(form: ITemplateForm): ITemplateRequest {
  const r = form.resources;
  const gpus = r.gpuType ? r.gpus : 0;
  return {
    name: form.name,
    display_name: form.displayName.trim(),
    description: form.description.trim(),
    version_label: form.versionLabel.trim(),
    visibility: form.visibility,
    group: form.visibility === 'group' ? form.group : null,
    environment: form.environment,
    cpu: cpuQuantity(r.cpus),
    memory: memoryQuantity(r.memoryGiB),
    gpu_type: r.gpuType && gpus > 0 ? r.gpuType : null,
    gpus,
    paths: normalizeSelection(form.paths),
    excluded: Array.from(
      new Set(form.excluded.map(p => p.trim()).filter(Boolean))
    )
  };
}

/* ---------------------------------------------------------------- times */

/** "less than a minute", "29 min", "1 h 5 min", "2 days 3 h". */
export function durationText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) {
    return 'less than a minute';
  }
  const minutes = Math.floor(s / 60);
  if (minutes < 60) {
    return `${minutes} min`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    const rest = minutes % 60;
    return `${hours} h${rest ? ` ${rest} min` : ''}`;
  }
  const days = Math.floor(hours / 24);
  const restHours = hours % 24;
  return `${days} ${days === 1 ? 'day' : 'days'}${restHours ? ` ${restHours} h` : ''}`;
}

/** "just now", "5 min ago", "2 h ago", "3 days ago"; '' when unknown. */
export function agoText(iso: string | null, now: number): string {
  const at = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(at)) {
    return '';
  }
  const seconds = Math.floor((now - at) / 1000);
  if (seconds < 60) {
    return 'just now';
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    return `${hours} h ago`;
  }
  const days = Math.floor(hours / 24);
  return `${days} ${days === 1 ? 'day' : 'days'} ago`;
}

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

/* ----------------------------------------------------------------- course */

/** A deployment as the Course panel shows it. */
export interface ICourseDeployment extends IDeployment {
  /** Shows the "new" badge. */
  isNew: boolean;
}

/** One group of the Course panel. */
export interface ICourseSection {
  group: ICourseGroup;
  /** Newest first. */
  deployments: ICourseDeployment[];
  /** Those that have not ended. */
  broadcasts: IBroadcast[];
  /** In `orderAssignments` order. */
  assignments: IAssignment[];
  /** How many deployments carry the "new" badge. */
  newCount: number;
}

/** The ids of the deployments the server calls new. */
export function newDeploymentIds(courses: ICourses): Set<number> {
  const ids = new Set<number>();
  for (const group of courses.groups) {
    for (const d of group.deployments) {
      if (d.new) {
        ids.add(d.id);
      }
    }
  }
  return ids;
}

/** Whether a broadcast is still on. */
export function isBroadcastLive(broadcast: IBroadcast, now: number): boolean {
  if (!broadcast.expires_at) {
    return true;
  }
  const end = Date.parse(broadcast.expires_at);
  return Number.isNaN(end) || end > now;
}

/**
 * The Course panel's sections, one per group in the server's order. A
 * deployment keeps its "new" badge while the panel is open even after it was
 * marked seen (`remembered`: ids that were new earlier in this visit).
 */
export function courseSections(
  courses: ICourses,
  now: number,
  remembered: ReadonlySet<number> = new Set()
): ICourseSection[] {
  return courses.groups.map(group => {
    const deployments = group.deployments
      .map(d => ({ ...d, isNew: d.new || remembered.has(d.id) }))
      .sort((a, b) => {
        const ta = Date.parse(a.at);
        const tb = Date.parse(b.at);
        return (Number.isNaN(tb) ? 0 : tb) - (Number.isNaN(ta) ? 0 : ta);
      });
    return {
      group,
      deployments,
      broadcasts: group.broadcasts.filter(b => isBroadcastLive(b, now)),
      assignments: orderAssignments(group.assignments, now),
      newCount: deployments.filter(d => d.isNew).length
    };
  });
}

/** A deployment that arrived since the previous look, with its group. */
export interface IArrival {
  group: string;
  title: string;
  path: string;
}

/** The new deployments that were not new (or not there) in the previous answer. */
export function newArrivals(
  courses: ICourses,
  known: ReadonlySet<number>
): IArrival[] {
  const arrivals: IArrival[] = [];
  for (const group of courses.groups) {
    for (const d of group.deployments) {
      if (d.new && !known.has(d.id)) {
        arrivals.push({
          group: group.display_name || group.name,
          title: d.title || d.path,
          path: d.path
        });
      }
    }
  }
  return arrivals;
}

/**
 * The hint for new material: "New course material: Week 2 (ML 2026)" or
 * "New course material: 3 items in ML 2026, CV 2026"; null when nothing is new.
 */
export function newMaterialHint(
  arrivals: ReadonlyArray<IArrival>
): string | null {
  if (arrivals.length === 0) {
    return null;
  }
  if (arrivals.length === 1) {
    return `New course material: ${arrivals[0].title} (${arrivals[0].group})`;
  }
  const groups = Array.from(new Set(arrivals.map(a => a.group)));
  return `New course material: ${arrivals.length} items in ${groups.join(', ')}`;
}

/** "Live: Alice Chen's notebook". */
export function broadcastLabel(broadcast: IBroadcast): string {
  return `Live: ${broadcast.owner_display_name || broadcast.owner}'s notebook`;
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

/* -------------------------------------------------------------- live view */

/** What the live view does with one open document. */
export type LiveViewAction =
  /** Reload it from the server. */
  | 'revert'
  /** Nothing changed (or nothing can be known now). */
  | 'none'
  /** It changed on the server, but the viewer changed it too: leave it. */
  | 'paused';

/** What the live view knows about one open document. */
export interface ILiveViewState {
  /** `last_modified` of what the document shows; null before it is loaded. */
  loaded: string | null | undefined;
  /** `last_modified` on the server now; null when it cannot be read. */
  current: string | null | undefined;
  /** Whether the document is dirty. */
  dirty: boolean;
  /**
   * Whether its content differs from what was loaded; undefined when not
   * known. JupyterLab marks some documents dirty while loading them (a
   * notebook without `language_info` gets one), so a dirty document whose
   * content is still what was loaded was not changed by the viewer.
   */
  edited?: boolean;
  /** Whether a reload of it is under way. */
  busy: boolean;
}

/** Whether two `last_modified` stamps name the same moment. */
function sameTime(a: string, b: string): boolean {
  const ta = Date.parse(a);
  const tb = Date.parse(b);
  if (Number.isNaN(ta) || Number.isNaN(tb)) {
    return a === b;
  }
  return ta === tb;
}

/**
 * Reload a document when the file changed on the server (its `last_modified`
 * differs from the one shown), unless the viewer changed it (dirty, and not
 * known to be unchanged since it was loaded) or a reload is already under
 * way.
 */
export function liveViewAction(state: ILiveViewState): LiveViewAction {
  if (state.busy || !state.loaded || !state.current) {
    return 'none';
  }
  if (sameTime(state.loaded, state.current)) {
    return 'none';
  }
  return state.dirty && state.edited !== false ? 'paused' : 'revert';
}

/** The live indicator's tooltip. */
export function liveViewTooltip(
  owner: string,
  intervalSeconds: number,
  paused: ReadonlyArray<string>,
  lastUpdate: string | null
): string {
  const lines = [
    `Live view: files you have open reload when ${owner} saves them ` +
      `(checked every ${intervalSeconds} s).`
  ];
  if (lastUpdate) {
    lines.push(`Last update: ${lastUpdate}.`);
  }
  if (paused.length) {
    lines.push(
      `Not reloaded because you changed them: ${paused.join(', ')}. ` +
        'Reload it from disk (File menu) to see the latest version.'
    );
  }
  return lines.join('\n');
}
