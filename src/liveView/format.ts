/**
 * Pure helpers of the live view: when a document reloads and what the
 * status item says.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

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
  lastUpdate: string | null,
  trans: TranslationBundle
): string {
  const lines = [
    trans.__(
      'Live view: files you have open reload when %1 saves them (checked every %2 s).',
      owner,
      intervalSeconds
    )
  ];
  if (lastUpdate) {
    lines.push(trans.__('Last update: %1.', lastUpdate));
  }
  if (paused.length) {
    lines.push(
      trans.__(
        'Not reloaded because you changed them: %1. Reload it from disk (File menu) to see the latest version.',
        paused.join(', ')
      )
    );
  }
  return lines.join('\n');
}
