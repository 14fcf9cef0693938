/**
 * The help queue as JupyterLab shows it, without the DOM: the shapes of the
 * lab routes (`cgu-lab/help...`, answered by the controller), the sentences of
 * the status item and the panel, and the rules of the Ask-for-help form.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

/** What the helper may do in the student's notebook. */
export type HelpAccess = 'edit' | 'read';

/** One raised hand. */
export interface IHelpRequest {
  id: number;
  group: string;
  student: { name: string; display_name: string };
  notebook: string;
  /** The notebook's page on the portal (`/notebook/<owner>/<name>/lab`). */
  url: string;
  question: string;
  access: HelpAccess | string;
  /** waiting, helping; then done, thanked or cancelled. */
  state: string;
  /** The place in the course's queue while waiting (1: next), else null. */
  position?: number | null;
  created_at: string;
  waited_seconds: number | null;
  helper: string | null;
  helper_display_name?: string | null;
  taken_at: string | null;
  ended_at: string | null;
}

/** A course's figures, for its staff. */
export interface IHelpFigures {
  waiting: number;
  being_helped: number;
  median_wait_seconds: number | null;
  median_help_seconds: number | null;
  helped: number;
}

/** One course's queue. */
export interface IHelpQueue {
  group: string;
  manages: boolean;
  requests: IHelpRequest[];
  figures?: IHelpFigures | null;
}

/** `GET cgu-lab/help`: where I may ask, the queues I help in, my own requests. */
export interface IHelpOverview {
  courses: string[];
  queues: IHelpQueue[];
  mine: IHelpRequest[];
}

/** What the Ask-for-help form gives. */
export interface IHelpAskForm {
  group: string;
  question: string;
  access: HelpAccess;
}

/** The most a question may have (the controller's limit). */
export const QUESTION_MAX = 200;

/** Whether a request still needs someone (waiting or being helped). */
export function isOpen(request: IHelpRequest): boolean {
  return request.state === 'waiting' || request.state === 'helping';
}

/** My first open request, or null. */
export function ownOpenRequest(
  overview: IHelpOverview | null
): IHelpRequest | null {
  return overview?.mine.find(isOpen) ?? null;
}

/** The courses where I have no open request (where I may ask now). */
export function coursesToAsk(overview: IHelpOverview | null): string[] {
  if (!overview) {
    return [];
  }
  const open = new Set(overview.mine.filter(isOpen).map(r => r.group));
  return overview.courses.filter(c => !open.has(c));
}

/** Whether the overview needs asking often: a hand up, or a queue to watch. */
export function needsWatching(overview: IHelpOverview | null): boolean {
  return (
    !!overview && (overview.queues.length > 0 || !!ownOpenRequest(overview))
  );
}

/** One line, at most `QUESTION_MAX` characters, as the controller keeps it. */
export function cleanQuestion(text: string): string {
  return text.split(/\s+/).filter(Boolean).join(' ');
}

/** Why the form cannot be sent, or null. */
export function validateAsk(
  value: IHelpAskForm,
  trans: TranslationBundle
): string | null {
  if (!value.group) {
    return trans.__('Choose the course to ask in.');
  }
  if (cleanQuestion(value.question).length > QUESTION_MAX) {
    return trans.__(
      'A question may have at most %1 characters (one line).',
      QUESTION_MAX
    );
  }
  if (value.access !== 'edit' && value.access !== 'read') {
    return trans.__('Choose whether the helper may edit or only watch.');
  }
  return null;
}

/** A duration for people: "45 s", "3 min", "1 h 05 min", "—" when unknown. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) {
    return '—';
  }
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) {
    return `${s} s`;
  }
  const minutes = Math.round(s / 60);
  if (minutes < 60) {
    return `${minutes} min`;
  }
  const rest = minutes % 60;
  return `${Math.floor(minutes / 60)} h ${String(rest).padStart(2, '0')} min`;
}

/** Seconds since a moment, by the clock `now` (milliseconds). */
export function secondsSince(iso: string | null, now: number): number | null {
  if (!iso) {
    return null;
  }
  const at = Date.parse(iso);
  return Number.isNaN(at) ? null : Math.max(0, (now - at) / 1000);
}

/** The helper's name as people read it. */
export function helperName(request: IHelpRequest): string {
  return request.helper_display_name || request.helper || '';
}

/** The status item's sentence about my request. */
export function ownStatusText(
  request: IHelpRequest,
  trans: TranslationBundle
): string {
  if (request.state === 'helping') {
    return trans.__('%1 is helping you', helperName(request));
  }
  if (request.state === 'waiting') {
    return request.position
      ? trans.__('Help: waiting (position %1)', request.position)
      : trans.__('Help: waiting');
  }
  return '';
}

/** The status item's tooltip. */
export function ownStatusTitle(
  request: IHelpRequest,
  trans: TranslationBundle
): string {
  const access =
    request.access === 'read'
      ? trans.__('they may only watch')
      : trans.__('they may edit');
  const question = request.question
    ? trans.__('"%1"', request.question)
    : trans.__('no question given');
  return trans.__(
    'Your hand is up in %1 about "%2" (%3; %4).',
    request.group,
    request.notebook,
    question,
    access
  );
}

/** The queue's figures in one line for its staff. */
export function figuresText(
  queue: IHelpQueue,
  trans: TranslationBundle
): string {
  const f = queue.figures;
  if (!f) {
    return '';
  }
  return trans.__(
    '%1 waiting · %2 being helped · median wait %3 · median help %4',
    f.waiting,
    f.being_helped,
    formatDuration(f.median_wait_seconds),
    formatDuration(f.median_help_seconds)
  );
}

/** A request's line in the panel: who, about what, since when. */
export function requestLine(
  request: IHelpRequest,
  now: number,
  trans: TranslationBundle
): string {
  if (request.state === 'helping') {
    return trans.__(
      '%1 · %2 · helped by %3 for %4',
      request.student.display_name,
      request.notebook,
      helperName(request),
      formatDuration(secondsSince(request.taken_at, now))
    );
  }
  return trans.__(
    '%1 · %2 · waiting %3',
    request.student.display_name,
    request.notebook,
    formatDuration(secondsSince(request.created_at, now))
  );
}

/** Where the notebook of a request opens: the portal's address for it. */
export function notebookUrl(
  request: IHelpRequest,
  controllerUrl: string | null
): string {
  if (/^https?:\/\//.test(request.url) || !controllerUrl) {
    return request.url;
  }
  return controllerUrl.replace(/\/+$/, '') + request.url;
}

/** The lab route of a request's action. */
export function actionPath(
  request: IHelpRequest,
  action: 'take' | 'end'
): string {
  return `help/${encodeURIComponent(request.group)}/${request.id}/${action}`;
}

/** `GET cgu-lab/collaboration` (the server extension): who is in which room. */
export interface ICollaborationSummary {
  last_activity: string | null;
  rooms: { room: string; editors: string[]; viewers: string[] }[];
}

/** Who else is in this notebook's document rooms, editing or watching. */
export function othersHere(
  summary: ICollaborationSummary | null,
  me: string
): { editors: string[]; viewers: string[] } {
  const editors = new Set<string>();
  const viewers = new Set<string>();
  for (const room of summary?.rooms ?? []) {
    // Document rooms are `<format>:<type>:<file id>`; the room every page
    // joins (`JupyterLab:globalAwareness`) has no document.
    if (room.room.split(':').length < 3) {
      continue;
    }
    room.editors.filter(n => n !== me).forEach(n => editors.add(n));
    room.viewers.filter(n => n !== me).forEach(n => viewers.add(n));
  }
  editors.forEach(n => viewers.delete(n));
  return { editors: [...editors].sort(), viewers: [...viewers].sort() };
}

/** The live indicator's text: "Live: ana editing · bo watching", '' when alone. */
export function presenceText(
  others: { editors: string[]; viewers: string[] },
  trans: TranslationBundle
): string {
  const parts: string[] = [];
  if (others.editors.length) {
    parts.push(trans.__('%1 editing', others.editors.join(', ')));
  }
  if (others.viewers.length) {
    parts.push(trans.__('%1 watching', others.viewers.join(', ')));
  }
  return parts.length ? trans.__('Live: %1', parts.join(' · ')) : '';
}
