/**
 * Pure helpers of the read-only notice: the notice texts, the kernel
 * preference of read-only notebooks and why a command is blocked.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Access, IServerInfo } from '../tokens';

/* ------------------------------------------------------ read-only / shared */

/** The persistent notice for a user who is not the owner; null for the owner. */
export function noticeText(
  info: IServerInfo,
  trans: TranslationBundle
): string | null {
  const owner = info.notebook?.owner || trans.__('another user');
  return accessNotice(info.access, owner, trans);
}

/**
 * The notice for an access level and an owner's name. (The status-bar label
 * is `accessLabel` of platform/state.ts, which also knows "Access revoked".)
 */
export function accessNotice(
  access: Access,
  owner: string,
  trans: TranslationBundle
): string | null {
  switch (access) {
    case 'read':
      return trans.__(
        "You are viewing %1's notebook read-only: you can open and read files, but not save, run cells or open terminals.",
        owner
      );
    case 'edit':
      return trans.__("You are editing %1's notebook, shared with you.", owner);
    default:
      return null;
  }
}

/** What a single-file share covers, as a sentence; null for a whole notebook. */
export function scopeText(
  scope: ReadonlyArray<string> | undefined,
  trans: TranslationBundle
): string | null {
  if (!scope || scope.length === 0) {
    return null;
  }
  return scope.length === 1
    ? trans.__('Only %1 is shared with you.', scope[0])
    : trans.__('Only these files are shared with you: %1.', scope.join(', '));
}

/** The full notice for the status-bar tooltip (notice + what is shared). */
export function fullNotice(
  info: IServerInfo,
  trans: TranslationBundle
): string | null {
  const notice = noticeText(info, trans);
  if (!notice) {
    return null;
  }
  const scope = scopeText(info.scope, trans);
  return scope ? trans.__('%1 %2', notice, scope) : notice;
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

/** What a command a read-only share blocks would have done. */
type BlockedAction =
  | 'save'
  | 'rename'
  | 'delete'
  | 'create-file'
  | 'create-folder'
  | 'paste'
  | 'duplicate'
  | 'create-notebook'
  | 'run'
  | 'kernel'
  | 'console'
  | 'terminal'
  | 'cells';

/** The commands a read-only share blocks. */
const BLOCKED_COMMANDS: { [id: string]: BlockedAction } = {
  'docmanager:save': 'save',
  'docmanager:save-all': 'save',
  'docmanager:save-as': 'save',
  'docmanager:rename': 'rename',
  'docmanager:delete': 'delete',
  'filebrowser:create-new-file': 'create-file',
  'filebrowser:create-new-directory': 'create-folder',
  'filebrowser:delete': 'delete',
  'filebrowser:rename': 'rename',
  'filebrowser:paste': 'paste',
  'filebrowser:duplicate': 'duplicate',
  'notebook:create-new': 'create-notebook',
  'notebook:run-cell': 'run',
  'notebook:run-cell-and-select-next': 'run',
  'notebook:run-cell-and-insert-below': 'run',
  'notebook:run-all-cells': 'run',
  'notebook:run-all-above': 'run',
  'notebook:run-all-below': 'run',
  'notebook:restart-run-all': 'run',
  'notebook:restart-kernel': 'kernel',
  'notebook:change-kernel': 'kernel',
  'runmenu:run': 'run',
  'runmenu:run-all': 'run',
  'kernelmenu:restart': 'kernel',
  'kernelmenu:change': 'kernel',
  'console:create': 'console',
  'terminal:create-new': 'terminal',
  // Structural edits of a notebook (the list of cells is fixed: cells.ts).
  'notebook:insert-cell-above': 'cells',
  'notebook:insert-cell-below': 'cells',
  'notebook:insert-heading-above': 'cells',
  'notebook:insert-heading-below': 'cells',
  'notebook:delete-cell': 'cells',
  'notebook:cut-cell': 'cells',
  'notebook:paste-cell-above': 'cells',
  'notebook:paste-cell-below': 'cells',
  'notebook:paste-and-replace-cell': 'cells',
  'notebook:duplicate-below': 'cells',
  'notebook:move-cell-up': 'cells',
  'notebook:move-cell-down': 'cells',
  'notebook:merge-cells': 'cells',
  'notebook:merge-cell-above': 'cells',
  'notebook:merge-cell-below': 'cells',
  'notebook:split-cell-at-cursor': 'cells',
  'notebook:change-cell-to-code': 'cells',
  'notebook:change-cell-to-markdown': 'cells',
  'notebook:change-cell-to-raw': 'cells',
  'notebook:change-cell-to-heading-1': 'cells',
  'notebook:change-cell-to-heading-2': 'cells',
  'notebook:change-cell-to-heading-3': 'cells',
  'notebook:change-cell-to-heading-4': 'cells',
  'notebook:change-cell-to-heading-5': 'cells',
  'notebook:change-cell-to-heading-6': 'cells'
};

/** A blocked action in words ("save files"), each a literal for the translators. */
function blockedActionText(
  action: BlockedAction,
  trans: TranslationBundle
): string {
  switch (action) {
    case 'save':
      return trans.__('save files');
    case 'rename':
      return trans.__('rename files');
    case 'delete':
      return trans.__('delete files');
    case 'create-file':
      return trans.__('create files');
    case 'create-folder':
      return trans.__('create folders');
    case 'paste':
      return trans.__('paste files');
    case 'duplicate':
      return trans.__('duplicate files');
    case 'create-notebook':
      return trans.__('create notebooks');
    case 'run':
      return trans.__('run cells');
    case 'kernel':
      return trans.__('start kernels');
    case 'console':
      return trans.__('open consoles');
    case 'terminal':
      return trans.__('open terminals');
    case 'cells':
      return trans.__('change the cells');
  }
}

/**
 * A clear message for a command a read-only share cannot do, or null when the
 * command is allowed (or the access is not read-only).
 */
export function blockedCommandMessage(
  commandId: string,
  access: Access | null,
  trans: TranslationBundle
): string | null {
  if (access !== 'read') {
    return null;
  }
  const action = BLOCKED_COMMANDS[commandId];
  if (!action) {
    return null;
  }
  return trans.__(
    'This notebook is shared with you read-only: you cannot %1 here.',
    blockedActionText(action, trans)
  );
}
