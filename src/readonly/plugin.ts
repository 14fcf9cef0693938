/**
 * Read-only and shared mode: what a user who is not the owner sees (a
 * persistent notice and a status-bar label that follows the share: "Shared:
 * can edit", "Read-only", "Access revoked"), keeping notebooks of a read-only
 * share from starting or joining kernels the server would refuse, and
 * answering "run cell" at once ("read-only: you cannot run cells") instead of
 * leaving the cell at `[*]` forever, and keeping a read-only notebook's cells
 * where they are (no cell added, deleted or moved: cells.ts).
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  ISessionContext,
  Notification
} from '@jupyterlab/apputils';
import type { ICodeCellModel } from '@jupyterlab/cells';
import {
  INotebookCellExecutor,
  INotebookTracker,
  NotebookPanel,
  runCell
} from '@jupyterlab/notebook';
import { IStatusBar } from '@jupyterlab/statusbar';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { registerCommand } from '../commands';
import { fixCellList, ICellList } from './cells';
import { h, replaceChildren } from '../dom';
import {
  blockedCommandMessage,
  fullNotice,
  noticeText,
  readOnlyKernelPreference
} from './format';
import { platformWatch } from '../platform/platform';
import { accessLabel } from '../platform/state';
import {
  Access,
  CommandIDs,
  DOMAIN,
  ICguLabSession,
  IServerInfo
} from '../tokens';

/**
 * Tell a session context never to start or join a kernel on its own: no
 * automatic start, no default kernel, no start at all, and no reuse of the
 * owner's running kernel (whose websocket a read-only viewer may not open, so
 * it would only ever show "connecting"). The kernel name is kept.
 */
export function preventKernelStart(sessionContext: ISessionContext): void {
  const preference = readOnlyKernelPreference(sessionContext.kernelPreference);
  if (preference !== sessionContext.kernelPreference) {
    sessionContext.kernelPreference = preference;
  }
}

/** The viewer's access, once the handshake answered (null before). */
let viewerAccess: Access | 'revoked' | null = null;
const lastShown = new Map<string, number>();

/**
 * Say why something cannot be done, each sentence at most every 4 seconds
 * ("run all" runs many cells).
 */
export function notifyReadOnly(message: string | null): void {
  if (!message || Date.now() - (lastShown.get(message) ?? 0) < 4000) {
    return;
  }
  lastShown.set(message, Date.now());
  Notification.warning(message, { autoClose: 6000 });
}

/**
 * A read-only notebook's list of cells stays as the file has it (cells.ts):
 * run-and-advance adds no cell, and nothing inserts, deletes or moves one.
 * Commands say why through `blockedCommandMessage`; a drag and drop, which is
 * no command, is told here.
 */
function fixCells(panel: NotebookPanel, trans: TranslationBundle): void {
  fixCellList(panel.context.model.sharedModel as unknown as ICellList, what => {
    if (what === 'move') {
      notifyReadOnly(
        blockedCommandMessage('notebook:move-cell-up', 'read', trans)
      );
    }
  });
  // Each cell's editor takes no typing either: in a live (collaborative) view the
  // document is a shared model the viewer's editor would write to, and the server
  // drops what it sends, so typing would only make the viewer's copy disagree.
  const lockEditors = (): void => {
    for (const cell of panel.content.widgets) {
      cell.readOnly = true;
    }
  };
  lockEditors();
  panel.content.modelContentChanged.connect(lockEditors);
}

/**
 * JupyterLab's cell runner, except for a read-only viewer's code cells: they
 * are not sent anywhere, the prompt stays as it was, and the viewer is told.
 */
export function readOnlyAwareExecutor(
  trans: TranslationBundle
): INotebookCellExecutor {
  return Object.freeze({
    runCell: async (
      options: INotebookCellExecutor.IRunCellOptions
    ): Promise<boolean> => {
      if (
        (viewerAccess === 'read' || viewerAccess === 'revoked') &&
        options.cell.model.type === 'code'
      ) {
        (options.cell.model as ICodeCellModel).executionState = 'idle';
        notifyReadOnly(
          blockedCommandMessage('notebook:run-cell', 'read', trans)
        );
        return false;
      }
      return runCell(options);
    }
  });
}

/** Provides the cell runner (in place of JupyterLab's, which it calls). */
export const cellExecutorPlugin: JupyterFrontEndPlugin<INotebookCellExecutor> =
  {
    id: 'cgu-lab:cell-executor',
    description:
      'Runs cells as JupyterLab does; tells a read-only viewer at once that they cannot.',
    autoStart: true,
    provides: INotebookCellExecutor,
    optional: [ITranslator],
    activate: (
      app: JupyterFrontEnd,
      translator: ITranslator | null
    ): INotebookCellExecutor =>
      readOnlyAwareExecutor((translator ?? nullTranslator).load(DOMAIN))
  };

/** The status-bar label: "Read-only", "Shared: can edit", "Access revoked". */
export class AccessStatus extends Widget {
  constructor(
    private readonly info: IServerInfo,
    private readonly onClick: () => void,
    private readonly trans: TranslationBundle
  ) {
    super();
    this.addClass('cgu-AccessStatus');
    this.setAccess(info.access);
  }

  /** Show another access (the share changed while the page was open). */
  setAccess(access: Access | 'revoked'): void {
    const revoked = access === 'revoked';
    const portal = this.info.controller_url;
    replaceChildren(
      this.node,
      h(
        'button',
        {
          type: 'button',
          class: `cgu-AccessStatus-button cgu-AccessStatus-${access}`,
          'data-cgu': 'access-status',
          'data-access': access,
          title: revoked
            ? this.trans.__('Your access ended. Back to the cgu-lab portal.')
            : (fullNotice({ ...this.info, access }, this.trans) ?? ''),
          onclick: () =>
            revoked && portal ? window.location.assign(portal) : this.onClick()
        },
        accessLabel(access, this.trans) ?? ''
      )
    );
  }
}

/**
 * For read access: notebooks never start or join a kernel, and commands that
 * cannot work say why.
 */
function guardReadOnlyNotebooks(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker | null,
  trans: TranslationBundle
): void {
  // As early as possible: a widget extension runs while the notebook
  // widget is created, before its session is initialised; the tracker
  // covers notebooks made by other factories.
  const guard = (panel: NotebookPanel): void => {
    preventKernelStart(panel.sessionContext);
    fixCells(panel, trans);
  };
  app.docRegistry.addWidgetExtension('Notebook', { createNew: guard });
  notebooks?.widgetAdded.connect((_, panel) => guard(panel));
  notebooks?.forEach(guard);
  app.commands.commandExecuted.connect((_, args) =>
    notifyReadOnly(
      blockedCommandMessage(args.id, viewerAccess as Access, trans)
    )
  );
}

/** The persistent notice: shown again in place of the last one. */
function accessNotice(notice: string): {
  show: () => void;
  dismiss: () => void;
} {
  let noticeId = '';
  return {
    show: () => {
      if (noticeId) {
        Notification.dismiss(noticeId);
      }
      noticeId = Notification.emit(
        notice,
        viewerAccess === 'read' ? 'warning' : 'info',
        { autoClose: false }
      );
    },
    dismiss: () => {
      if (noticeId) {
        Notification.dismiss(noticeId);
      }
    }
  };
}

/** Follow the share's access while the page is open. */
function followAccessChanges(
  status: AccessStatus,
  dismissNotice: () => void
): void {
  void platformWatch().then(watch =>
    watch?.accessChanged.connect((_, access) => {
      viewerAccess = access;
      if (access === 'revoked') {
        dismissNotice();
      }
      status.setAccess(access);
    })
  );
}

/**
 * Read-only / shared mode: a persistent notice and a status-bar label for a
 * user who is not the owner; for read access, notebooks never start or join a
 * kernel (the server would refuse) and commands that cannot work say why.
 */
export const readonlyPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:readonly',
  description: 'Tells a user who is not the owner what a share lets them do.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [INotebookTracker, IStatusBar, ICommandPalette, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    notebooks: INotebookTracker | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ) => {
    const info = session.info;
    viewerAccess = info?.access ?? null;
    if (!info || info.access === 'owner') {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const notice = noticeText(info, trans);
    if (!notice) {
      return;
    }

    if (info.access === 'read') {
      guardReadOnlyNotebooks(app, notebooks, trans);
    }

    const { show: showNotice, dismiss } = accessNotice(notice);
    registerCommand(
      app,
      CommandIDs.showAccessNotice,
      {
        label: trans.__('Show What This Share Allows'),
        caption: notice,
        execute: showNotice
      },
      { palette }
    );
    const status = new AccessStatus(info, showNotice, trans);
    statusBar?.registerStatusItem(readonlyPlugin.id, {
      item: status,
      align: 'left',
      rank: 0
    });
    followAccessChanges(status, dismiss);
    // After the application is up, so the toast is not lost in the start-up.
    void app.restored.then(showNotice);
  }
};
