/**
 * The cgu-lab lab extension: several small plugins, one per feature.
 *
 * - `cgu-lab:core` — the handshake with the server extension; provides the
 *   session (who is looking, with what access).
 * - `cgu-lab:connection`, `cgu-lab:platform` — tell the user when the
 *   notebook stopped (idle culler, crash, stop) or their share ended, with the
 *   way to go on, instead of "Server Connection Error" (platformPlugin.ts).
 * - `cgu-lab:portal` — "Back to cgu-lab portal" in the File menu and top bar.
 * - `cgu-lab:readonly`, `cgu-lab:cell-executor` — the notice and status-bar
 *   label for users who are not the owner; read-only notebooks start no
 *   kernel and "run cell" says at once why it cannot (readonly.ts).
 * - `cgu-lab:resources` — status-bar figures, the Resources panel, Resize.
 * - `cgu-lab:share` — the Share dialog (toolbar button, palette, file browser).
 * - `cgu-lab:shared-with-me` — the left-sidebar list of what others shared.
 * - `cgu-lab:culling` — the idle countdown with "Keep running" (culling.ts).
 * - `cgu-lab:templates` — "Save as template" for teachers (toolbar, palette,
 *   File menu).
 * - `cgu-lab:submit` — "Submit" an assignment, with its receipt; preselects
 *   what the notebook reads and what its template brought.
 * - `cgu-lab:course` — the left-sidebar Course panel: material, live
 *   broadcasts, assignments.
 * - `cgu-lab:live-view` — for read-only viewers (a broadcast), open documents
 *   reload when the owner saves them.
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
import { PathExt } from '@jupyterlab/coreutils';
import { DocumentRegistry, DocumentWidget } from '@jupyterlab/docregistry';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { IMainMenu } from '@jupyterlab/mainmenu';
import {
  INotebookModel,
  INotebookTracker,
  NotebookPanel
} from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { IStatusBar } from '@jupyterlab/statusbar';
import { LabIcon, shareIcon, ToolbarButton } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { Signal } from '@lumino/signaling';
import { CguAPI, errorMessage } from './api';
import { CoursePanel } from './course';
import { cullingPlugin } from './culling';
import { absoluteShareUrl, formatBytes } from './format';
import { handshake, sessionFromHandshake } from './handshake';
import {
  courseIcon,
  gaugeIcon,
  sharedWithMeIcon,
  submitIcon,
  templateIcon
} from './icons';
import { LiveView, LiveViewStatus, openDocuments } from './liveView';
import {
  connectionPlugin,
  platformPlugin,
  portalPlugin
} from './platformPlugin';
import { cellExecutorPlugin, readonlyPlugin } from './readonly';
import {
  openResizeDialog,
  ResourcesModel,
  ResourcesPanel,
  ResourcesStatus
} from './resources';
import { openShareDialog } from './share';
import { SharedWithMePanel } from './sharedWithMe';
import { openSubmitDialog, showReceiptDialog } from './submit';
import { notebookSources, suggestFiles } from './submitPreselect';
import {
  filesText,
  intervalSeconds,
  normalizePath,
  receiptSummary
} from './teaching';
import { openTemplateDialog } from './templates';
import {
  CommandIDs,
  DOMAIN,
  ICguLabSession,
  IResourcesModel,
  PALETTE_CATEGORY,
  ShareAccess
} from './tokens';

/**
 * Core plugin: checks the server extension answers and provides the session
 * to the other plugins. (The way back to the portal is `cgu-lab:portal`.)
 */
const corePlugin: JupyterFrontEndPlugin<ICguLabSession> = {
  id: 'cgu-lab:core',
  description: 'Connects JupyterLab to the cgu-lab platform.',
  autoStart: true,
  provides: ICguLabSession,
  activate: async (): Promise<ICguLabSession> => {
    const result = await handshake();
    const session = sessionFromHandshake(result);
    if (!result.ok) {
      Notification.warning(result.message, { autoClose: false });
      return session;
    }
    // A landmark for styles and UI tests: <body data-cgu-access="owner|edit|read">.
    document.body.dataset.cguAccess = result.info.access;
    return session;
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

/** A toolbar button on every notebook that runs a command with its path. */
class CommandButtonExtension implements DocumentRegistry.IWidgetExtension<
  NotebookPanel,
  INotebookModel
> {
  constructor(
    private _app: JupyterFrontEnd,
    private _options: {
      id: string;
      command: string;
      label: string;
      tooltip: string;
      icon: LabIcon;
      dataCgu: string;
      /** Resolves whether the button is for this user; shown once true. */
      visible?: Promise<boolean>;
    }
  ) {}

  createNew(
    panel: NotebookPanel,
    context: DocumentRegistry.IContext<INotebookModel>
  ): ToolbarButton {
    const o = this._options;
    const button = new ToolbarButton({
      icon: o.icon,
      label: o.label,
      tooltip: o.tooltip,
      dataset: { cgu: o.dataCgu },
      onClick: () => {
        void this._app.commands.execute(o.command, { path: context.path });
      }
    });
    button.addClass('cgu-ToolbarButton');
    if (o.visible) {
      button.hide();
      void o.visible.then(show => {
        if (!button.isDisposed) {
          button.setHidden(!show);
        }
      });
    }
    if (
      !panel.toolbar.insertAfter('cgu-share', o.id, button) &&
      !panel.toolbar.insertAfter('spacer', o.id, button)
    ) {
      panel.toolbar.addItem(o.id, button);
    }
    return button;
  }
}

/**
 * The file a command is about, relative to the home: the `path` argument, or
 * the document in front, or the current notebook.
 */
function currentPath(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker | null,
  args: ReadonlyPartialJSONObject
): string | null {
  const contents = app.serviceManager.contents;
  if (typeof args.path === 'string' && args.path) {
    return normalizePath(contents.localPath(args.path)) || null;
  }
  const widget = app.shell.currentWidget;
  const context =
    widget instanceof DocumentWidget
      ? widget.context
      : (notebooks?.currentWidget?.context ?? null);
  return context
    ? normalizePath(contents.localPath(context.path)) || null
    : null;
}

/**
 * Save as template (teachers, TAs and admins): the toolbar button, the palette
 * command and the File menu item, shown once the server says the user may
 * publish.
 */
const templatesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:templates',
  description:
    'Saves files of this home, an environment and resources as a template.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [INotebookTracker, ICommandPalette, IMainMenu],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    notebooks: INotebookTracker | null,
    palette: ICommandPalette | null,
    mainMenu: IMainMenu | null
  ) => {
    if (!session.info || !session.isOwner) {
      return;
    }
    let canPublish = false;
    const allowed = CguAPI.templateOptions()
      .then(options => {
        canPublish = options.can_publish;
        app.commands.notifyCommandChanged(CommandIDs.saveTemplate);
        return canPublish;
      })
      .catch(reason => {
        console.warn(
          'cgu-lab: cannot ask whether templates may be saved',
          reason
        );
        return false;
      });

    app.commands.addCommand(CommandIDs.saveTemplate, {
      label: 'Save as Template…',
      caption:
        'Publish files of this home, an environment and default resources as a template',
      icon: templateIcon,
      isVisible: () => canPublish,
      execute: async args => {
        let options, quota;
        try {
          [options, quota] = await Promise.all([
            CguAPI.templateOptions(),
            CguAPI.quota().catch(() => null)
          ]);
        } catch (error) {
          await showErrorMessage('Cannot save a template', errorMessage(error));
          return;
        }
        if (!options.can_publish) {
          await showErrorMessage(
            'Cannot save a template',
            'Only teachers, teaching assistants and administrators can publish templates.'
          );
          return;
        }
        const path = currentPath(app, notebooks, args);
        const baseName = path
          ? PathExt.basename(path, PathExt.extname(path))
          : '';
        await openTemplateDialog({
          options,
          gpuTypes: quota?.gpu_types ?? [],
          initialPaths: path ? [path] : [],
          displayName: baseName,
          onCreated: created => {
            const url = absoluteShareUrl(created.url, window.location.origin);
            Notification.success(
              `Saved template "${created.name}" version ${created.version}: ` +
                `${filesText(created.files)}, ${formatBytes(created.bytes)}.`,
              {
                autoClose: false,
                actions: created.url
                  ? [
                      {
                        label: 'Open template page',
                        caption: url,
                        displayType: 'link',
                        callback: () => {
                          window.open(url, '_blank', 'noopener');
                        }
                      }
                    ]
                  : []
              }
            );
          }
        });
      }
    });
    palette?.addItem({
      command: CommandIDs.saveTemplate,
      category: PALETTE_CATEGORY
    });
    mainMenu?.fileMenu.addGroup([{ command: CommandIDs.saveTemplate }], 98);
    app.docRegistry.addWidgetExtension(
      'Notebook',
      new CommandButtonExtension(app, {
        id: 'cgu-save-template',
        command: CommandIDs.saveTemplate,
        label: 'Save as template',
        tooltip:
          'Publish this notebook and other files of your home as a template',
        icon: templateIcon,
        dataCgu: 'save-template-button',
        visible: allowed
      })
    );
  }
};

/** Submit (owner): the toolbar button, the palette command and the File menu item. */
const submitPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:submit',
  description: 'Submits files of this home for an assignment.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [INotebookTracker, ICommandPalette, IMainMenu, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    notebooks: INotebookTracker | null,
    palette: ICommandPalette | null,
    mainMenu: IMainMenu | null,
    translator: ITranslator | null
  ) => {
    if (!session.info || !session.isOwner) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    app.commands.addCommand(CommandIDs.submit, {
      label: 'Submit Assignment…',
      caption: 'Hand in files of this home for an assignment of your course',
      icon: submitIcon,
      execute: async args => {
        let assignments;
        try {
          assignments = await CguAPI.assignments();
        } catch (error) {
          await showErrorMessage('Cannot submit', errorMessage(error));
          return;
        }
        const path = currentPath(app, notebooks, args);
        const requested = Number(args.assignmentId);
        // What the notebook needs to run elsewhere: the files it reads, its template's.
        const suggestions = await suggestFiles({
          notebookPath: path,
          sources: path
            ? await notebookSources(app, notebooks, path).catch(() => [])
            : []
        });
        const receipt = await openSubmitDialog({
          assignments,
          assignmentId: Number.isInteger(requested) ? requested : null,
          initialPaths: path ? [path] : [],
          suggestions,
          trans,
          onSubmitted: submitted => {
            const url = absoluteShareUrl(submitted.url, window.location.origin);
            Notification.success(receiptSummary(submitted), {
              autoClose: 10000,
              actions: submitted.url
                ? [
                    {
                      label: 'Open receipt',
                      caption: url,
                      displayType: 'link',
                      callback: () => {
                        window.open(url, '_blank', 'noopener');
                      }
                    }
                  ]
                : []
            });
          }
        });
        if (receipt) {
          await showReceiptDialog(receipt);
          void app.commands.execute(CommandIDs.refreshCourse).catch(() => {
            /* no Course panel */
          });
        }
      }
    });
    palette?.addItem({
      command: CommandIDs.submit,
      category: PALETTE_CATEGORY
    });
    mainMenu?.fileMenu.addGroup([{ command: CommandIDs.submit }], 98);
    app.docRegistry.addWidgetExtension(
      'Notebook',
      new CommandButtonExtension(app, {
        id: 'cgu-submit',
        command: CommandIDs.submit,
        label: 'Submit',
        tooltip: 'Submit this notebook (and other files) for an assignment',
        icon: submitIcon,
        dataCgu: 'submit-button'
      })
    );
  }
};

/** The Course panel (owner): material, live broadcasts, assignments. */
const coursePlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:course',
  description:
    'Lists the material, live notebooks and assignments of my course groups.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [ICommandPalette, ILayoutRestorer, ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null
  ) => {
    if (!session.info || !session.isOwner) {
      return;
    }
    const { commands, shell } = app;
    let notify = true;
    let hintId = '';
    const panel = new CoursePanel({
      openPath: path => {
        const command = commands.hasCommand('filebrowser:open-path')
          ? 'filebrowser:open-path'
          : 'docmanager:open';
        void commands.execute(command, { path });
      },
      submit: assignmentId =>
        void commands.execute(CommandIDs.submit, { assignmentId }),
      onNewMaterial: hint => {
        if (!notify) {
          return;
        }
        if (hintId) {
          Notification.dismiss(hintId);
        }
        hintId = Notification.info(hint, {
          autoClose: 8000,
          actions: [
            {
              label: 'Open Course',
              caption: 'Show the Course panel',
              callback: () => shell.activateById(panel.id)
            }
          ]
        });
      },
      onShow: () => {
        if (hintId) {
          Notification.dismiss(hintId);
          hintId = '';
        }
      }
    });
    panel.id = 'cgu-lab-course';
    panel.title.icon = courseIcon;
    panel.title.caption = 'Course';
    panel.node.setAttribute('aria-label', 'Course');
    shell.add(panel, 'left', { rank: 850 });
    restorer?.add(panel, 'cgu-lab-course');

    commands.addCommand(CommandIDs.openCourse, {
      label: 'Open Course Panel',
      caption:
        'Show the material, live notebooks and assignments of your courses',
      icon: courseIcon,
      execute: () => shell.activateById(panel.id)
    });
    commands.addCommand(CommandIDs.refreshCourse, {
      label: 'Refresh Course Panel',
      caption: 'Load the material and assignments of your courses again',
      execute: () => panel.refresh()
    });
    for (const command of [CommandIDs.openCourse, CommandIDs.refreshCourse]) {
      palette?.addItem({ command, category: PALETTE_CATEGORY });
    }

    if (settingRegistry) {
      void settingRegistry
        .load(coursePlugin.id)
        .then(settings => {
          const apply = () => {
            panel.interval = intervalSeconds(
              settings.get('pollInterval').composite,
              60,
              10
            );
            notify = settings.get('notifyNewMaterial').composite !== false;
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason =>
          console.error('cgu-lab: cannot load the course settings', reason)
        );
    }
    void app.restored.then(() => panel.start());
  }
};

/**
 * The live view (read-only viewers, e.g. a broadcast to a class): open
 * documents reload when the owner saves them; "Live view" in the status bar.
 */
const liveViewPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:live-view',
  description:
    'Reloads the documents a read-only viewer has open when the owner saves them.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [ISettingRegistry, IStatusBar, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    settingRegistry: ISettingRegistry | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null
  ) => {
    const info = session.info;
    if (!info || info.access !== 'read') {
      return;
    }
    const status = new LiveViewStatus(() => void live.check());
    const live = new LiveView({
      documents: () => openDocuments(app.shell),
      contents: app.serviceManager.contents,
      interval: 5,
      owner: info.notebook?.owner || 'the owner',
      status
    });
    // A landmark for styles and UI tests: <body data-cgu-live-view="on">.
    document.body.dataset.cguLiveView = 'on';
    statusBar?.registerStatusItem(liveViewPlugin.id, {
      item: status,
      align: 'left',
      rank: 1
    });
    app.commands.addCommand(CommandIDs.checkLiveView, {
      label: 'Check Live View Now',
      caption: 'Reload the open documents that changed on the server now',
      execute: () => live.check()
    });
    palette?.addItem({
      command: CommandIDs.checkLiveView,
      category: PALETTE_CATEGORY
    });
    if (settingRegistry) {
      void settingRegistry
        .load(liveViewPlugin.id)
        .then(settings => {
          const apply = () => {
            live.interval = intervalSeconds(
              settings.get('interval').composite,
              5,
              1
            );
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason =>
          console.error('cgu-lab: cannot load the live-view settings', reason)
        );
    }
    void app.restored.then(() => live.start());
  }
};

export default [
  corePlugin,
  connectionPlugin,
  platformPlugin,
  portalPlugin,
  cellExecutorPlugin,
  readonlyPlugin,
  resourcesPlugin,
  sharePlugin,
  sharedWithMePlugin,
  cullingPlugin,
  templatesPlugin,
  submitPlugin,
  coursePlugin,
  liveViewPlugin
];
