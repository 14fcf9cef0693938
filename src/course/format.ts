/**
 * Pure helpers of the Course panel: its sections, what is new, the labels
 * of broadcasts and the "ago" texts.
 */
import { orderAssignments } from '../submit/format';
import {
  IAssignment,
  IBroadcast,
  ICourseGroup,
  ICourses,
  IDeployment
} from '../apiTypes';

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
