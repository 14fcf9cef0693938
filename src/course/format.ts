/**
 * Pure helpers of the Course panel: its sections, what is new, the labels
 * of broadcasts and the "ago" texts (durations are `durationText` of
 * ../format.ts).
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { orderAssignments } from '../submit/format';
import {
  IAssignment,
  IBroadcast,
  IBroadcastCopied,
  ICourseGroup,
  ICourses,
  IDeployment
} from '../apiTypes';

/* ---------------------------------------------------------------- times */

/** "just now", "5 min ago", "2 h ago", "3 days ago"; '' when unknown. */
export function agoText(
  iso: string | null,
  now: number,
  trans: TranslationBundle
): string {
  const at = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(at)) {
    return '';
  }
  const seconds = Math.floor((now - at) / 1000);
  if (seconds < 60) {
    return trans.__('just now');
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return trans.__('%1 min ago', minutes);
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    return trans.__('%1 h ago', hours);
  }
  return trans._n('%1 day ago', '%1 days ago', Math.floor(hours / 24));
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
  arrivals: ReadonlyArray<IArrival>,
  trans: TranslationBundle
): string | null {
  if (arrivals.length === 0) {
    return null;
  }
  if (arrivals.length === 1) {
    return trans.__(
      'New course material: %1 (%2)',
      arrivals[0].title,
      arrivals[0].group
    );
  }
  const groups = Array.from(new Set(arrivals.map(a => a.group)));
  return trans.__(
    'New course material: %1 items in %2',
    arrivals.length,
    groups.join(', ')
  );
}

/** "Live: Alice Chen's notebook". */
export function broadcastLabel(
  broadcast: IBroadcast,
  trans: TranslationBundle
): string {
  return trans.__(
    "Live: %1's notebook",
    broadcast.owner_display_name || broadcast.owner
  );
}

/** What "Copy to my home" did, in a sentence for the panel's status line. */
export function copiedText(
  copied: IBroadcastCopied,
  trans: TranslationBundle
): string {
  const kept = copied.conflicts.length
    ? trans.__(
        ' %1 file(s) you had already were kept; the copies are beside them.',
        copied.conflicts.length
      )
    : '';
  return (
    trans.__(
      'Copied %1 file(s) into %2/ (%3 already there).',
      copied.copied,
      copied.folder,
      copied.skipped
    ) + kept
  );
}
