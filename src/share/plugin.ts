/**
 * `cgu-lab:share` — the Share dialog (toolbar button, palette, file browser);
 * `cgu-lab:shared-with-me` — the left-sidebar list of what others shared.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  IToolbarWidgetRegistry,
  Notification
} from '@jupyterlab/apputils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { shareIcon } from '@jupyterlab/ui-components';
import { registerCommand } from '../commands';
import { sharedWithMeIcon } from '../icons';
import { openShareDialog } from './dialog';
import { SharedWithMePanel } from './sharedWithMe';
import { ShareAccess } from '../apiTypes';
import { CommandIDs, DOMAIN, ICguLabSession } from '../tokens';

type OpenShare = (
  mode: 'choose' | 'file' | 'notebook',
  path: string | null
) => Promise<void>;

interface IShareDefaults {
  access: ShareAccess;
  expiry: string;
}

function trackShareDefaults(
  settingRegistry: ISettingRegistry,
  defaults: IShareDefaults
): void {
  void settingRegistry
    .load(sharePlugin.id)
    .then(settings => {
      const apply = () => {
        defaults.access =
          settings.get('defaultAccess').composite === 'edit' ? 'edit' : 'read';
        defaults.expiry = String(
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

function registerShareCommand(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  open: OpenShare,
  notebooks: INotebookTracker | null,
  palette: ICommandPalette | null,
  toolbars: IToolbarWidgetRegistry | null
): void {
  registerCommand(
    app,
    CommandIDs.share,
    {
      label: trans.__('Share…'),
      caption: trans.__(
        'Share the open notebook, or this whole notebook server, with people or groups'
      ),
      icon: shareIcon,
      execute: async args => {
        let path = typeof args.path === 'string' ? args.path : null;
        if (path === null) {
          const current = notebooks?.currentWidget;
          if (current && current === app.shell.currentWidget) {
            path = current.context.path;
          }
        }
        await open(path ? 'choose' : 'notebook', path);
      }
    },
    {
      palette,
      button: {
        registry: toolbars,
        id: 'cgu-share',
        label: trans.__('Share'),
        tooltip: trans.__('Share this notebook with people or groups'),
        icon: shareIcon,
        dataCgu: 'share-button',
        className: 'cgu-ShareButton'
      }
    }
  );
}

function registerShareFileCommand(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  open: OpenShare,
  browser: IDefaultFileBrowser | null,
  palette: ICommandPalette | null
): void {
  const selectedFile = (): string | null => {
    const item = browser?.selectedItems().next();
    if (!item || item.done || !item.value) {
      return null;
    }
    return item.value.type === 'directory' ? null : item.value.path;
  };
  registerCommand(
    app,
    CommandIDs.shareFile,
    {
      label: trans.__('Share this file…'),
      caption: trans.__('Share only the selected file with people or groups'),
      icon: shareIcon,
      isEnabled: args => typeof args.path === 'string' || !!selectedFile(),
      execute: async args => {
        const path = typeof args.path === 'string' ? args.path : selectedFile();
        if (!path) {
          Notification.warning(
            trans.__('Select a file in the file browser first.'),
            { autoClose: 5000 }
          );
          return;
        }
        await open('file', path);
      }
    },
    { palette }
  );
}

/**
 * Share (owner only): the toolbar button, the palette command and the file
 * browser's "Share this file…".
 */
export const sharePlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:share',
  description:
    'Shares this notebook, or one file in it, with people or groups.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [
    INotebookTracker,
    IDefaultFileBrowser,
    ICommandPalette,
    ISettingRegistry,
    ITranslator,
    IToolbarWidgetRegistry
  ],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    notebooks: INotebookTracker | null,
    browser: IDefaultFileBrowser | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    toolbars: IToolbarWidgetRegistry | null
  ) => {
    const info = session.info;
    if (!info || !session.isOwner) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const contents = app.serviceManager.contents;
    const defaults: IShareDefaults = { access: 'read', expiry: 'none' };
    if (settingRegistry) {
      trackShareDefaults(settingRegistry, defaults);
    }

    const open: OpenShare = (mode, path) =>
      openShareDialog({
        mode,
        filePath: path === null ? null : contents.localPath(path),
        notebookName: info.notebook?.name ?? null,
        selfName: info.user.name,
        defaultAccess: defaults.access,
        defaultExpiry: defaults.expiry,
        origin: window.location.origin,
        trans
      });

    registerShareCommand(app, trans, open, notebooks, palette, toolbars);
    registerShareFileCommand(app, trans, open, browser, palette);
  }
};

/** Shared with me (owner only): a left-sidebar list. */
export const sharedWithMePlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:shared-with-me',
  description: 'Lists the notebooks and files others shared with me.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [ICommandPalette, ILayoutRestorer, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null
  ) => {
    if (!session.info || !session.isOwner) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const panel = new SharedWithMePanel({ trans });
    panel.id = 'cgu-lab-shared-with-me';
    panel.title.icon = sharedWithMeIcon;
    panel.title.caption = trans.__('Shared with me');
    app.shell.add(panel, 'left', { rank: 900 });
    restorer?.add(panel, 'cgu-lab-shared-with-me');

    registerCommand(
      app,
      CommandIDs.openSharedWithMe,
      {
        label: trans.__('Open Shared with Me'),
        caption: trans.__(
          'List the notebooks and files others shared with you'
        ),
        execute: () => {
          app.shell.activateById(panel.id);
        }
      },
      { palette }
    );
    registerCommand(
      app,
      CommandIDs.refreshSharedWithMe,
      {
        label: trans.__('Refresh Shared with Me'),
        caption: trans.__('Load the list of what others shared with you again'),
        execute: () => panel.refresh()
      },
      { palette }
    );
  }
};
