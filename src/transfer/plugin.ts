/**
 * `cgu-lab:transfer` — the file manager: folders and archives between the
 * student's computer and the notebook.
 *
 * - "Upload Folder…" (file browser toolbar, File menu, palette) and folders
 *   dropped on the file browser keep their tree, with progress, Cancel and
 *   resuming (upload.ts); the server checks names and the disk allowance
 *   first;
 * - "Upload and Extract Archive…" and "Extract Here" on an archive;
 * - "Download as Zip" on folders and selections: one zip, streamed by the
 *   server;
 * - a "Files" button on every notebook's toolbar with the same, for the
 *   notebook's folder.
 *
 * Read-only viewers get downloads only (the server refuses them the rest
 * too); single-file viewers get nothing here.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  IToolbarWidgetRegistry,
  Notification
} from '@jupyterlab/apputils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { DOMAIN, ICguLabSession } from '../tokens';
import { ITransferContext, uploadTree } from './actions';
import {
  ITransferEnv,
  registerDownloadZip,
  registerExtract,
  registerTransferMenu,
  registerUploadArchive,
  registerUploadFolder,
  transferPaths
} from './commands';
import { carriesFiles, droppedEntries } from './pick';
import { ContentsTransport } from './transport';

export { TransferCommandIDs, transferIcon, uploadFolderIcon } from './commands';

/** Whether drops on the file browser are ours; a setting. */
interface IDropState {
  takeOverDrops: boolean;
}

export const transferPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:transfer',
  description:
    'Uploads folders and archives, and downloads folders and selections as one zip.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [
    IDefaultFileBrowser,
    ICommandPalette,
    ISettingRegistry,
    ITranslator,
    IToolbarWidgetRegistry
  ],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    browser: IDefaultFileBrowser | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    toolbars: IToolbarWidgetRegistry | null
  ) => {
    const info = session.info;
    if (!info || (info.scope?.length ?? 0) > 0) {
      return; // a single-file viewer sees one file: nothing to transfer
    }
    const canWrite = info.access === 'owner' || info.access === 'edit';
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const drops: IDropState = { takeOverDrops: true };
    const env: ITransferEnv = {
      app,
      trans,
      ctx: transferContext(trans, browser),
      browser,
      palette,
      toolbars,
      canWrite,
      ...transferPaths(app, browser)
    };
    registerUploadFolder(env);
    registerUploadArchive(env);
    registerExtract(env);
    registerDownloadZip(env);
    registerTransferMenu(env);
    addDropUpload(env, drops);
    loadTransferSettings(settingRegistry, env.ctx, drops);
  }
};

/** The context of the actions, with the default chunk size and parallelism. */
function transferContext(
  trans: ITransferContext['trans'],
  browser: IDefaultFileBrowser | null
): ITransferContext {
  const settings = ServerConnection.makeSettings();
  return {
    trans,
    transport: new ContentsTransport(settings),
    baseUrl: settings.baseUrl,
    chunkSize: 4 * 1024 * 1024,
    parallel: 3,
    refresh: async () => {
      await browser?.model.refresh().catch(() => undefined);
    }
  };
}

/**
 * Drops of files and folders from the computer: taken before JupyterLab's own
 * handler (a capturing listener on an ancestor), for the tree, progress,
 * Cancel and the checks.
 */
function addDropUpload(env: ITransferEnv, drops: IDropState): void {
  const { browser, trans, ctx, canWrite, local } = env;
  browser?.node.addEventListener(
    'drop',
    (event: DragEvent) => {
      if (!drops.takeOverDrops || !carriesFiles(event)) {
        return;
      }
      event.preventDefault();
      event.stopPropagation();
      browser.node
        .querySelectorAll('.jp-mod-dropTarget')
        .forEach(node => node.classList.remove('jp-mod-dropTarget'));
      if (!canWrite) {
        Notification.warning(
          trans.__(
            'Your access to this notebook is read-only: you cannot upload here.'
          ),
          { autoClose: 6000 }
        );
        return;
      }
      const folder = local(browser.model.path);
      void droppedEntries(event).then(picked =>
        uploadTree(ctx, folder, picked)
      );
    },
    true
  );
}

/** Apply the transfer settings now and whenever they change. */
function loadTransferSettings(
  settingRegistry: ISettingRegistry | null,
  ctx: ITransferContext,
  drops: IDropState
): void {
  settingRegistry
    ?.load(transferPlugin.id)
    .then(loaded => {
      const apply = () => {
        ctx.chunkSize =
          Number(loaded.get('chunkSizeMiB').composite ?? 4) * 1024 * 1024;
        ctx.parallel = Number(loaded.get('parallelFiles').composite ?? 3);
        drops.takeOverDrops = loaded.get('takeOverDrops').composite !== false;
      };
      apply();
      loaded.changed.connect(apply);
    })
    .catch(reason =>
      console.error('cgu-lab: cannot load the transfer settings', reason)
    );
}
