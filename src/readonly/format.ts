/**
 * Pure helpers of the read-only notice: the notice texts, the kernel
 * preference of read-only notebooks and why a command is blocked.
 */
import { Access, IServerInfo } from '../tokens';

/* ------------------------------------------------------ read-only / shared */

/** The persistent notice for a user who is not the owner; null for the owner. */
export function noticeText(info: IServerInfo): string | null {
  const owner = info.notebook?.owner || 'another user';
  return accessNotice(info.access, owner);
}

/** The notice for an access level and an owner's name. */
export function accessNotice(access: Access, owner: string): string | null {
  switch (access) {
    case 'read':
      return (
        `You are viewing ${owner}'s notebook read-only: you can open and read ` +
        'files, but not save, run cells or open terminals.'
      );
    case 'edit':
      return `You are editing ${owner}'s notebook, shared with you.`;
    default:
      return null;
  }
}

/** The short status-bar label for an access level; null for the owner. */
export function accessStatusLabel(access: Access): string | null {
  switch (access) {
    case 'read':
      return 'Read-only';
    case 'edit':
      return 'Shared: can edit';
    default:
      return null;
  }
}

/** What a single-file share covers, as a sentence; null for a whole notebook. */
export function scopeText(
  scope: ReadonlyArray<string> | undefined
): string | null {
  if (!scope || scope.length === 0) {
    return null;
  }
  return scope.length === 1
    ? `Only ${scope[0]} is shared with you.`
    : `Only these files are shared with you: ${scope.join(', ')}.`;
}

/** The full notice for the status-bar tooltip (notice + what is shared). */
export function fullNotice(info: IServerInfo): string | null {
  const notice = noticeText(info);
  if (!notice) {
    return null;
  }
  const scope = scopeText(info.scope);
  return scope ? `${notice} ${scope}` : notice;
}

/**
 * The kernel-preference fields a read-only share turns off (the shape of
 * `ISessionContext.IKernelPreference`, without importing it).
 */
export interface IKernelStartPreference {
  readonly name?: string;
  readonly shouldReuse?: boolean;
  readonly shouldStart?: boolean;
  readonly canStart?: boolean;
  readonly autoStartDefault?: boolean;
}

/**
 * A kernel preference that never starts or joins a kernel (no automatic
 * start, no default kernel, no start at all, no reuse of the kernel running
 * for the path: a read-only viewer may not open its websocket, so it would
 * only ever say "connecting"), keeping the other fields; the same object
 * when it already does none of these.
 */
export function readOnlyKernelPreference<T extends IKernelStartPreference>(
  preference: T
): T {
  if (
    preference.canStart === false &&
    preference.shouldStart === false &&
    preference.autoStartDefault === false &&
    preference.shouldReuse === false
  ) {
    return preference;
  }
  return {
    ...preference,
    canStart: false,
    shouldStart: false,
    autoStartDefault: false,
    shouldReuse: false
  };
}

/** What each blocked command would have done, for the read-only message. */
const BLOCKED_COMMANDS: { [id: string]: string } = {
  'docmanager:save': 'save files',
  'docmanager:save-all': 'save files',
  'docmanager:save-as': 'save files',
  'docmanager:rename': 'rename files',
  'docmanager:delete': 'delete files',
  'filebrowser:create-new-file': 'create files',
  'filebrowser:create-new-directory': 'create folders',
  'filebrowser:delete': 'delete files',
  'filebrowser:rename': 'rename files',
  'filebrowser:paste': 'paste files',
  'filebrowser:duplicate': 'duplicate files',
  'notebook:create-new': 'create notebooks',
  'notebook:run-cell': 'run cells',
  'notebook:run-cell-and-select-next': 'run cells',
  'notebook:run-cell-and-insert-below': 'run cells',
  'notebook:run-all-cells': 'run cells',
  'notebook:run-all-above': 'run cells',
  'notebook:run-all-below': 'run cells',
  'notebook:restart-run-all': 'run cells',
  'notebook:restart-kernel': 'start kernels',
  'notebook:change-kernel': 'start kernels',
  'runmenu:run': 'run cells',
  'runmenu:run-all': 'run cells',
  'kernelmenu:restart': 'start kernels',
  'kernelmenu:change': 'start kernels',
  'console:create': 'open consoles',
  'terminal:create-new': 'open terminals'
};

/**
 * A clear message for a command a read-only share cannot do, or null when the
 * command is allowed (or the access is not read-only).
 */
export function blockedCommandMessage(
  commandId: string,
  access: Access | null
): string | null {
  if (access !== 'read') {
    return null;
  }
  const what = BLOCKED_COMMANDS[commandId];
  if (!what) {
    return null;
  }
  return `This notebook is shared with you read-only: you cannot ${what} here.`;
}
