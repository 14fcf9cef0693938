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
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { downloadIcon, LabIcon } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { Menu } from '@lumino/widgets';
import { registerCommand } from '../commands';
import { DOMAIN, ICguLabSession } from '../tokens';
import {
  downloadZip,
  extractArchive,
  ITransferContext,
  uploadAndExtract,
  uploadTree
} from './actions';
import { ARCHIVE_SUFFIXES, isArchive } from './format';
import {
  carriesFiles,
  chooseFiles,
  chooseFolder,
  droppedEntries
} from './pick';
import { ContentsTransport } from './transport';

/** The commands of the file manager. */
export namespace TransferCommandIDs {
  export const uploadFolder = 'cgu-lab:upload-folder';
  export const uploadArchive = 'cgu-lab:upload-archive';
  export const extract = 'cgu-lab:extract-archive';
  export const downloadZip = 'cgu-lab:download-zip';
  export const menu = 'cgu-lab:file-transfer';
}

/** A folder with an arrow up. */
export const uploadFolderIcon = new LabIcon({
  name: 'cgu-lab:upload-folder',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M10 4H4a2 2 0 0 0-2 2v12a2 2 0 0 0 2 2h16a2 2 0 0 0 2-2V8a2 2 0 0 0-2-2h-8l-2-2zm2 5 4 4h-3v4h-2v-4H8l4-4z"/>' +
    '</svg>'
});

/** Two arrows: to and from the notebook. */
export const transferIcon = new LabIcon({
  name: 'cgu-lab:transfer',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M7 3 2 8h4v7h2V8h4L7 3zm10 18 5-5h-4V9h-2v7h-4l5 5z"/>' +
    '</svg>'
});

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
    ITranslator
  ],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    browser: IDefaultFileBrowser | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null
  ) => {
    const info = session.info;
    if (!info || (info.scope?.length ?? 0) > 0) {
      return; // a single-file viewer sees one file: nothing to transfer
    }
    const canWrite = info.access === 'owner' || info.access === 'edit';
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const settings = ServerConnection.makeSettings();
    const contents = app.serviceManager.contents;
    let takeOverDrops = true;
    const ctx: ITransferContext = {
      trans,
      transport: new ContentsTransport(settings),
      baseUrl: settings.baseUrl,
      chunkSize: 4 * 1024 * 1024,
      parallel: 3,
      refresh: async () => {
        await browser?.model.refresh().catch(() => undefined);
      }
    };

    const local = (path: string) =>
      contents.localPath(path).replace(/^\/+|\/+$/g, '');
    /** The folder a command is for: `folder`, a notebook's own (`path`), or the browser's. */
    const folderOf = (args: ReadonlyPartialJSONObject): string => {
      if (typeof args.folder === 'string') {
        return local(args.folder);
      }
      if (typeof args.path === 'string') {
        return local(PathExt.dirname(args.path));
      }
      return browser ? local(browser.model.path) : '';
    };
    const selected = (): string[] =>
      browser
        ? Array.from(browser.selectedItems(), item => local(item.path))
        : [];

    registerCommand(
      app,
      TransferCommandIDs.uploadFolder,
      {
        label: trans.__('Upload Folder…'),
        caption: trans.__(
          'Upload a folder of this computer, with everything in it'
        ),
        icon: uploadFolderIcon,
        isVisible: () => canWrite,
        execute: async args => {
          const folder = folderOf(args);
          await uploadTree(ctx, folder, await chooseFolder());
        }
      },
      { palette }
    );
    registerCommand(
      app,
      TransferCommandIDs.uploadArchive,
      {
        label: trans.__('Upload and Extract Archive…'),
        caption: trans.__(
          'Upload a .zip or .tar.gz and extract it into this folder'
        ),
        isVisible: () => canWrite,
        execute: async args => {
          const folder = folderOf(args);
          const [archive] = await chooseFiles(ARCHIVE_SUFFIXES.join(','));
          if (archive) {
            await uploadAndExtract(ctx, folder, archive);
          }
        }
      },
      {
        palette,
        contextMenu: { selector: '.jp-DirListing-content', rank: 12 }
      }
    );
    const archiveArg = (args: ReadonlyPartialJSONObject): string | null => {
      const path =
        typeof args.archive === 'string' ? local(args.archive) : null;
      const chosen = path ?? (selected().length === 1 ? selected()[0] : null);
      return chosen && isArchive(chosen) ? chosen : null;
    };
    registerCommand(
      app,
      TransferCommandIDs.extract,
      {
        label: trans.__('Extract Here'),
        caption: trans.__('Extract this archive into its folder'),
        isVisible: args => canWrite && archiveArg(args) !== null,
        execute: async args => {
          const archive = archiveArg(args);
          if (archive) {
            await extractArchive(ctx, archive, false);
          }
        }
      },
      {
        palette,
        contextMenu: {
          selector: '.jp-DirListing-item[data-isdir="false"]',
          rank: 11
        }
      }
    );
    registerCommand(
      app,
      TransferCommandIDs.downloadZip,
      {
        label: trans.__('Download as Zip'),
        caption: trans.__('Download the selected folders and files as one zip'),
        icon: downloadIcon,
        execute: args => {
          const paths = Array.isArray(args.paths)
            ? (args.paths as string[]).map(local)
            : selected();
          downloadZip(ctx, paths.length ? paths : [folderOf(args)]);
        }
      },
      {
        palette,
        contextMenu: { selector: '.jp-DirListing-item', rank: 11.5 }
      }
    );

    // The notebook toolbar's "Files" button: the same, for the notebook's folder.
    registerCommand(
      app,
      TransferCommandIDs.menu,
      {
        label: trans.__('Transfer Files…'),
        caption: trans.__(
          'Upload a folder or an archive here, or download this folder as a zip'
        ),
        icon: transferIcon,
        execute: args => {
          const folder = folderOf(args);
          const menu = new Menu({ commands: app.commands });
          menu.addClass('cgu-TransferMenu');
          menu.node.dataset.cgu = 'transfer-menu';
          if (canWrite) {
            menu.addItem({
              command: TransferCommandIDs.uploadFolder,
              args: { folder }
            });
            menu.addItem({
              command: TransferCommandIDs.uploadArchive,
              args: { folder }
            });
          }
          menu.addItem({
            command: TransferCommandIDs.downloadZip,
            args: { paths: [folder] }
          });
          const button = app.shell.currentWidget?.node.querySelector(
            '[data-cgu="transfer-button"]'
          );
          const where = button?.getBoundingClientRect();
          menu.open(where?.left ?? 100, where?.bottom ?? 100);
        }
      },
      {
        button: {
          id: 'cgu-transfer',
          label: trans.__('Files'),
          tooltip: trans.__(
            'Upload a folder or an archive, or download this folder as a zip'
          ),
          icon: transferIcon,
          dataCgu: 'transfer-button'
        }
      }
    );

    // Drops of files and folders from the computer: taken before JupyterLab's own handler
    // (a capturing listener on an ancestor), for the tree, progress, Cancel and the checks.
    browser?.node.addEventListener(
      'drop',
      (event: DragEvent) => {
        if (!takeOverDrops || !carriesFiles(event)) {
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

    settingRegistry
      ?.load(transferPlugin.id)
      .then(loaded => {
        const apply = () => {
          ctx.chunkSize =
            Number(loaded.get('chunkSizeMiB').composite ?? 4) * 1024 * 1024;
          ctx.parallel = Number(loaded.get('parallelFiles').composite ?? 3);
          takeOverDrops = loaded.get('takeOverDrops').composite !== false;
        };
        apply();
        loaded.changed.connect(apply);
      })
      .catch(reason =>
        console.error('cgu-lab: cannot load the transfer settings', reason)
      );
  }
};
