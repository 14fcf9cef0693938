/**
 * Out of memory: when the kernel's OOM killer stops a process of this
 * notebook (its memory ceiling reached: usually the kernel that was
 * computing), JupyterLab says only that the kernel restarted. The server
 * extension reads its group's own count of such kills with the resources
 * (`memory.oom_kills`); this watch compares each answer with the one before
 * and tells the user what happened, with a way out: use less memory, or (the
 * owner) resize the notebook.
 *
 * The count is the group's since it was made, so the first answer is only a
 * reference: a kill before this page opened is not announced again. A kernel
 * that dies or restarts asks for the figures at once instead of at the next
 * poll.
 */
import { Notification } from '@jupyterlab/apputils';
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import { formatBytes } from '../format';
import { ResourcesModel } from './model';

/** Kernel states that follow a kernel's death: the moment to look at the count. */
const DYING = new Set(['autorestarting', 'restarting', 'dead']);

/** How many processes were killed between two counts (0 when unknown or none). */
export function newKills(
  before: number | null | undefined,
  now: number | null | undefined
): number {
  if (before === null || before === undefined) {
    return 0;
  }
  if (now === null || now === undefined || now <= before) {
    return 0;
  }
  return now - before;
}

/**
 * What the user is told: how many processes, the ceiling, and what to do. A
 * count comes only with a ceiling (the server reads it only from a group whose
 * ceiling is the notebook's), so `limit` is that ceiling in bytes.
 */
export function outOfMemoryText(
  kills: number,
  limit: number,
  trans: TranslationBundle,
  mayResize: boolean
): string {
  const what = trans._n(
    'This notebook reached its memory limit of %2 and the system stopped a process in it, most likely the kernel that was running: its variables are lost.',
    'This notebook reached its memory limit of %2 and the system stopped %1 processes in it, most likely kernels that were running: their variables are lost.',
    kills,
    formatBytes(limit)
  );
  const advice = mayResize
    ? trans.__('Work on less data at once, or resize the notebook.')
    : trans.__(
        'Work on less data at once, or ask the notebook’s owner for more memory.'
      );
  return `${what} ${advice}`;
}

/**
 * Watch the resources for kills, for as long as the page is open (the model
 * polls while anyone holds it). Returns a function that stops watching.
 */
export function watchOutOfMemory(options: {
  model: ResourcesModel;
  trans: TranslationBundle;
  notebooks: INotebookTracker | null;
  /** The Resize action, for the owner; null for anyone else. */
  resize: (() => void) | null;
}): () => void {
  const { model, trans, notebooks, resize } = options;
  let known: number | null | undefined = model.resources?.memory.oom_kills;
  const check = () => {
    const resources = model.resources;
    if (!resources) {
      return;
    }
    const now = resources.memory.oom_kills;
    const kills = newKills(known, now);
    if (now !== null && now !== undefined) {
      known = now;
    }
    const limit = resources.memory.limit_bytes;
    if (kills > 0 && limit !== null) {
      Notification.error(
        outOfMemoryText(kills, limit, trans, resize !== null),
        {
          autoClose: false,
          actions: resize
            ? [{ label: trans.__('Resize…'), callback: resize }]
            : []
        }
      );
    }
  };
  model.changed.connect(check);
  const release = model.use();
  const onStatus = (_: unknown, status: string) => {
    if (DYING.has(status)) {
      void model.refresh();
    }
  };
  notebooks?.widgetAdded.connect((_, panel) => {
    panel.sessionContext.statusChanged.connect(onStatus);
  });
  notebooks?.forEach(panel =>
    panel.sessionContext.statusChanged.connect(onStatus)
  );
  return () => {
    model.changed.disconnect(check);
    release();
  };
}
