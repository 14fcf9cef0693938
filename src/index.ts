/**
 * The cgu-lab lab extension: several small plugins, one per feature.
 *
 * - `cgu-lab:core` — the handshake with the server extension; provides the
 *   session (who is looking, with what access) and the way back to the
 *   platform's control panel.
 * - `cgu-lab:readonly` — the notice and status-bar label for users who are not
 *   the owner; keeps read-only notebooks from starting kernels.
 * - `cgu-lab:resources` — status-bar figures, the Resources panel, Resize.
 * - `cgu-lab:share` — the Share dialog (toolbar button, palette, file browser).
 * - `cgu-lab:shared-with-me` — the left-sidebar list of what others shared.
 * - `cgu-lab:culling` — the idle countdown with "Keep running".
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  MainAreaWidget,
  Notification,
  showErrorMessage,
  WidgetTracker
} from '@jupyterlab/apputils';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { IMainMenu } from '@jupyterlab/mainmenu';
import {
  INotebookModel,
  INotebookTracker,
  NotebookPanel
} from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { shareIcon, ToolbarButton } from '@jupyterlab/ui-components';
import { Signal } from '@lumino/signaling';
import { CguAPI, errorMessage } from './api';
import { CullingStatusItem, CullingWatch } from './culling';
import { blockedCommandMessage, noticeText } from './format';
import { handshake, sessionFromHandshake } from './handshake';
import { gaugeIcon, sharedWithMeIcon } from './icons';
import { AccessStatus, preventKernelStart } from './readonly';
import {
  openResizeDialog,
  ResourcesModel,
  ResourcesPanel,
  ResourcesStatus
} from './resources';
import { openShareDialog } from './share';
import { SharedWithMePanel } from './sharedWithMe';
import {
  CommandIDs,
  ICguLabSession,
  IResourcesModel,
  PALETTE_CATEGORY,
  ShareAccess
} from './tokens';

/**
 * Core plugin: checks the server extension answers, provides the session to
 * the other plugins, and offers a way back to the platform's control panel
 * (the list of my notebooks) from the File menu and the command palette.
 */
const corePlugin: JupyterFrontEndPlugin<ICguLabSession> = {
  id: 'cgu-lab:core',
  description: 'Connects JupyterLab to the cgu-lab platform.',
  autoStart: true,
  provides: ICguLabSession,
  optional: [ICommandPalette, IMainMenu],
  activate: async (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    mainMenu: IMainMenu | null
  ): Promise<ICguLabSession> => {
    const result = await handshake();
    const session = sessionFromHandshake(result);
    if (!result.ok) {
      Notification.warning(result.message, { autoClose: false });
      return session;
    }
    // A landmark for styles and UI tests: <body data-cgu-access="owner|edit|read">.
    document.body.dataset.cguAccess = result.info.access;
    const controllerUrl = result.info.controller_url;
    if (!controllerUrl) {
      return session;
    }
    app.commands.addCommand(CommandIDs.openControlPanel, {
      label: 'cgu-lab Control Panel',
      caption: 'Open the list of your notebooks on the platform',
      execute: () => {
        window.open(controllerUrl, '_blank', 'noopener');
      }
    });
    palette?.addItem({
      command: CommandIDs.openControlPanel,
      category: PALETTE_CATEGORY
    });
    mainMenu?.fileMenu.addGroup([{ command: CommandIDs.openControlPanel }], 99);
    return session;
  }
};

/**
 * Read-only / shared mode: a persistent notice and a status-bar label for a
 * user who is not the owner; for read access, notebooks never try to start a
 * kernel (the server would refuse) and commands that cannot work say why.
 */
const readonlyPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:readonly',
  description: 'Tells a user who is not the owner what a share lets them do.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [INotebookTracker, IStatusBar, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    notebooks: INotebookTracker | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null
  ) => {
    const info = session.info;
    if (!info || info.access === 'owner') {
      return;
    }
    const notice = noticeText(info);
    if (!notice) {
      return;
    }

    if (info.access === 'read') {
      // As early as possible: a widget extension runs while the notebook
      // widget is created, before its session is initialised; the tracker
      // covers notebooks made by other factories.
      app.docRegistry.addWidgetExtension('Notebook', {
        createNew: (panel: NotebookPanel) =>
          preventKernelStart(panel.sessionContext)
      });
      notebooks?.widgetAdded.connect((_, panel) =>
        preventKernelStart(panel.sessionContext)
      );
      notebooks?.forEach(panel => preventKernelStart(panel.sessionContext));

      let lastShown = 0;
      app.commands.commandExecuted.connect((_, args) => {
        const message = blockedCommandMessage(args.id, info.access);
        if (!message || Date.now() - lastShown < 4000) {
          return;
        }
        lastShown = Date.now();
        Notification.warning(message, { autoClose: 6000 });
      });
    }

    let noticeId = '';
    const showNotice = () => {
      if (noticeId) {
        Notification.dismiss(noticeId);
      }
      noticeId = Notification.emit(
        notice,
        info.access === 'read' ? 'warning' : 'info',
        { autoClose: false }
      );
    };
    app.commands.addCommand(CommandIDs.showAccessNotice, {
      label: 'Show What This Share Allows',
      caption: notice,
      execute: showNotice
    });
    palette?.addItem({
      command: CommandIDs.showAccessNotice,
      category: PALETTE_CATEGORY
    });
    statusBar?.registerStatusItem(readonlyPlugin.id, {
      item: new AccessStatus(info, showNotice),
      align: 'left',
      rank: 0
    });
    // After the application is up, so the toast is not lost in the start-up.
    void app.restored.then(showNotice);
  }
};

/**
 * Resources: the status-bar figures, the Resources panel and (owner only)
 * the Resize dialog.
 */
const resourcesPlugin: JupyterFrontEndPlugin<IResourcesModel> = {
  id: 'cgu-lab:resources',
  description:
    'Shows the CPU, memory and GPU use of this notebook and lets the owner resize it.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [ISettingRegistry, IStatusBar, ICommandPalette, ILayoutRestorer],
  provides: IResourcesModel,
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    settingRegistry: ISettingRegistry | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ): IResourcesModel => {
    const model = new ResourcesModel({ interval: 5 });
    if (!session.info) {
      return model; // the server extension is not there: nothing to show
    }
    const { commands, shell } = app;

    // Resize (owner only).
    if (session.isOwner) {
      commands.addCommand(CommandIDs.resize, {
        label: 'Resize This Notebook…',
        caption:
          'Change the CPUs, memory and GPUs of this notebook (restarts it)',
        execute: async () => {
          let quota, resources;
          try {
            [quota, resources] = await Promise.all([
              CguAPI.quota(),
              CguAPI.resources()
            ]);
          } catch (error) {
            await showErrorMessage('Cannot resize', errorMessage(error));
            return;
          }
          await openResizeDialog({
            quota,
            resources,
            onAccepted: (response, target) => {
              Notification.info(
                'Restarting this notebook with the new resources; this page ' +
                  'follows the restart and comes back when it is ready.',
                { autoClose: false }
              );
              if (target) {
                window.setTimeout(() => window.location.assign(target), 800);
              } else {
                Notification.warning(
                  'The server did not say where to follow the restart: ' +
                    'reload this page in a minute.',
                  { autoClose: false }
                );
              }
            }
          });
        }
      });
      palette?.addItem({
        command: CommandIDs.resize,
        category: PALETTE_CATEGORY
      });
    }

    // The Resources panel.
    const tracker = new WidgetTracker<MainAreaWidget<ResourcesPanel>>({
      namespace: 'cgu-lab-resources'
    });
    commands.addCommand(CommandIDs.openResources, {
      label: 'Open Resources',
      caption: 'Show the CPU, memory and GPU use of this notebook',
      icon: gaugeIcon,
      execute: () => {
        let widget = tracker.currentWidget;
        if (!widget || widget.isDisposed) {
          const content = new ResourcesPanel({
            model,
            onResize: session.isOwner
              ? () => void commands.execute(CommandIDs.resize)
              : null
          });
          widget = new MainAreaWidget({ content });
          widget.id = 'cgu-lab-resources';
          widget.title.label = 'Resources';
          widget.title.icon = gaugeIcon;
          widget.title.closable = true;
          void tracker.add(widget);
        }
        if (!widget.isAttached) {
          shell.add(widget, 'main', { mode: 'split-right' });
        }
        shell.activateById(widget.id);
        return widget;
      }
    });
    palette?.addItem({
      command: CommandIDs.openResources,
      category: PALETTE_CATEGORY
    });
    void restorer?.restore(tracker, {
      command: CommandIDs.openResources,
      name: () => 'resources'
    });

    // The status-bar item, which can be turned off in the settings.
    let showItem = true;
    const activeChanged = new Signal<unknown, void>(model);
    statusBar?.registerStatusItem(resourcesPlugin.id, {
      item: new ResourcesStatus(
        model,
        () => void commands.execute(CommandIDs.openResources)
      ),
      align: 'left',
      rank: 100,
      isActive: () => showItem,
      activeStateChanged: activeChanged
    });

    if (settingRegistry) {
      void settingRegistry
        .load(resourcesPlugin.id)
        .then(settings => {
          const apply = () => {
            model.interval = Number(settings.get('refreshInterval').composite);
            const show = settings.get('showStatusBarItem').composite !== false;
            if (show !== showItem) {
              showItem = show;
              activeChanged.emit();
            }
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason =>
          console.error('cgu-lab: cannot load the resources settings', reason)
        );
    }
    return model;
  }
};

/** Adds a "Share" button to every notebook's toolbar. */
class ShareButtonExtension implements DocumentRegistry.IWidgetExtension<
  NotebookPanel,
  INotebookModel
> {
  constructor(private _app: JupyterFrontEnd) {}

  createNew(
    panel: NotebookPanel,
    context: DocumentRegistry.IContext<INotebookModel>
  ): ToolbarButton {
    const button = new ToolbarButton({
      icon: shareIcon,
      label: 'Share',
      tooltip: 'Share this notebook with people or groups',
      dataset: { cgu: 'share-button' },
      onClick: () => {
        void this._app.commands.execute(CommandIDs.share, {
          path: context.path
        });
      }
    });
    button.addClass('cgu-ShareButton');
    if (!panel.toolbar.insertAfter('spacer', 'cgu-share', button)) {
      panel.toolbar.addItem('cgu-share', button);
    }
    return button;
  }
}

/**
 * Share (owner only): the toolbar button, the palette command and the file
 * browser's "Share this file…".
 */
const sharePlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:share',
  description:
    'Shares this notebook, or one file in it, with people or groups.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [
    INotebookTracker,
    IDefaultFileBrowser,
    ICommandPalette,
    ISettingRegistry
  ],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    notebooks: INotebookTracker | null,
    browser: IDefaultFileBrowser | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null
  ) => {
    const info = session.info;
    if (!info || !session.isOwner) {
      return;
    }
    const { commands, shell } = app;
    const contents = app.serviceManager.contents;
    let defaultAccess: ShareAccess = 'read';
    let defaultExpiry = 'none';
    if (settingRegistry) {
      void settingRegistry
        .load(sharePlugin.id)
        .then(settings => {
          const apply = () => {
            defaultAccess =
              settings.get('defaultAccess').composite === 'edit'
                ? 'edit'
                : 'read';
            defaultExpiry = String(
              settings.get('defaultExpiry').composite ?? 'none'
            );
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason =>
          console.error('cgu-lab: cannot load the share settings', reason)
        );
    }

    const open = (mode: 'choose' | 'file' | 'notebook', path: string | null) =>
      openShareDialog({
        mode,
        filePath: path === null ? null : contents.localPath(path),
        notebookName: info.notebook?.name ?? null,
        selfName: info.user.name,
        defaultAccess,
        defaultExpiry,
        origin: window.location.origin
      });

    commands.addCommand(CommandIDs.share, {
      label: 'Share…',
      caption:
        'Share the open notebook, or this whole notebook server, with people or groups',
      icon: shareIcon,
      execute: async args => {
        let path = typeof args.path === 'string' ? args.path : null;
        if (path === null) {
          const current = notebooks?.currentWidget;
          if (current && current === shell.currentWidget) {
            path = current.context.path;
          }
        }
        await open(path ? 'choose' : 'notebook', path);
      }
    });
    palette?.addItem({ command: CommandIDs.share, category: PALETTE_CATEGORY });

    const selectedFile = (): string | null => {
      const item = browser?.selectedItems().next();
      if (!item || item.done || !item.value) {
        return null;
      }
      return item.value.type === 'directory' ? null : item.value.path;
    };
    commands.addCommand(CommandIDs.shareFile, {
      label: 'Share this file…',
      caption: 'Share only the selected file with people or groups',
      icon: shareIcon,
      isEnabled: args => typeof args.path === 'string' || !!selectedFile(),
      execute: async args => {
        const path = typeof args.path === 'string' ? args.path : selectedFile();
        if (!path) {
          Notification.warning('Select a file in the file browser first.', {
            autoClose: 5000
          });
          return;
        }
        await open('file', path);
      }
    });
    palette?.addItem({
      command: CommandIDs.shareFile,
      category: PALETTE_CATEGORY
    });
    app.contextMenu.addItem({
      command: CommandIDs.shareFile,
      selector: '.jp-DirListing-item[data-isdir="false"]',
      rank: 60
    });

    app.docRegistry.addWidgetExtension(
      'Notebook',
      new ShareButtonExtension(app)
    );
  }
};

/** Shared with me (owner only): a left-sidebar list. */
const sharedWithMePlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:shared-with-me',
  description: 'Lists the notebooks and files others shared with me.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [ICommandPalette, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ) => {
    if (!session.info || !session.isOwner) {
      return;
    }
    const panel = new SharedWithMePanel();
    panel.id = 'cgu-lab-shared-with-me';
    panel.title.icon = sharedWithMeIcon;
    panel.title.caption = 'Shared with me';
    app.shell.add(panel, 'left', { rank: 900 });
    restorer?.add(panel, 'cgu-lab-shared-with-me');

    app.commands.addCommand(CommandIDs.openSharedWithMe, {
      label: 'Open Shared with Me',
      caption: 'List the notebooks and files others shared with you',
      execute: () => {
        app.shell.activateById(panel.id);
      }
    });
    app.commands.addCommand(CommandIDs.refreshSharedWithMe, {
      label: 'Refresh Shared with Me',
      caption: 'Load the list of what others shared with you again',
      execute: () => panel.refresh()
    });
    for (const command of [
      CommandIDs.openSharedWithMe,
      CommandIDs.refreshSharedWithMe
    ]) {
      palette?.addItem({ command, category: PALETTE_CATEGORY });
    }
  }
};

/**
 * The idle countdown: a warning with "Keep running" before the platform stops
 * an idle notebook, for those who may use it (owner and editors).
 */
const cullingPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:culling',
  description:
    'Warns before an idle notebook is stopped and offers to keep it running.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [IStatusBar, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null
  ) => {
    if (!session.info || session.access === 'read') {
      return;
    }
    const item = new CullingStatusItem(() => void watch.keepRunning());
    const watch = new CullingWatch(item);
    statusBar?.registerStatusItem('cgu-lab:culling', {
      item,
      align: 'left',
      rank: 0
    });
    app.commands.addCommand(CommandIDs.keepRunning, {
      label: 'Keep This Notebook Running',
      caption: 'Count now as activity so the idle culler does not stop it',
      execute: () => watch.keepRunning()
    });
    palette?.addItem({
      command: CommandIDs.keepRunning,
      category: PALETTE_CATEGORY
    });
    watch.start();
  }
};

export default [
  corePlugin,
  readonlyPlugin,
  resourcesPlugin,
  sharePlugin,
  sharedWithMePlugin,
  cullingPlugin
];
