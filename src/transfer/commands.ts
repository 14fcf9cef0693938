/**
 * The file manager's commands, one `register...` each: upload a folder,
 * upload and extract an archive, extract one here, download as a zip, and the
 * notebook toolbar's "Files" menu of these.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette, IToolbarWidgetRegistry } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import type { TranslationBundle } from '@jupyterlab/translation';
import { downloadIcon, LabIcon } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { Menu } from '@lumino/widgets';
import { registerCommand } from '../commands';
import {
  downloadZip,
  extractArchive,
  ITransferContext,
  uploadAndExtract,
  uploadTree
} from './actions';
import { ARCHIVE_SUFFIXES, isArchive } from './format';
import { chooseFiles, chooseFolder } from './pick';

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

/** What the file manager's commands share. */
export interface ITransferEnv {
  app: JupyterFrontEnd;
  trans: TranslationBundle;
  ctx: ITransferContext;
  browser: IDefaultFileBrowser | null;
  palette: ICommandPalette | null;
  /** Where the notebook toolbar's "Files" button gets its widget. */
  toolbars: IToolbarWidgetRegistry | null;
  canWrite: boolean;
  /** A path as the home's, without slashes at either end. */
  local: (path: string) => string;
  /** The folder a command is for: `folder`, a notebook's own (`path`), or the browser's. */
  folderOf: (args: ReadonlyPartialJSONObject) => string;
  /** The file browser's selected paths. */
  selected: () => string[];
}

/** The paths helpers of a transfer environment, from the contents manager and the browser. */
export function transferPaths(
  app: JupyterFrontEnd,
  browser: IDefaultFileBrowser | null
): Pick<ITransferEnv, 'local' | 'folderOf' | 'selected'> {
  const contents = app.serviceManager.contents;
  const local = (path: string) =>
    contents.localPath(path).replace(/^\/+|\/+$/g, '');
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
  return { local, folderOf, selected };
}

export function registerUploadFolder(env: ITransferEnv): void {
  const { app, trans, ctx, palette, canWrite, folderOf } = env;
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
}

export function registerUploadArchive(env: ITransferEnv): void {
  const { app, trans, ctx, palette, canWrite, folderOf } = env;
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
    { palette }
  );
}

export function registerExtract(env: ITransferEnv): void {
  const { app, trans, ctx, palette, canWrite, local, selected } = env;
  const archiveArg = (args: ReadonlyPartialJSONObject): string | null => {
    const path = typeof args.archive === 'string' ? local(args.archive) : null;
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
    { palette }
  );
}

export function registerDownloadZip(env: ITransferEnv): void {
  const { app, trans, ctx, palette, local, folderOf, selected } = env;
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
    { palette }
  );
}

/** The notebook toolbar's "Files" button: the same, for the notebook's folder. */
export function registerTransferMenu(env: ITransferEnv): void {
  const { app, trans, folderOf } = env;
  registerCommand(
    app,
    TransferCommandIDs.menu,
    {
      label: trans.__('Transfer Files…'),
      caption: trans.__(
        'Upload a folder or an archive here, or download this folder as a zip'
      ),
      icon: transferIcon,
      execute: args => openTransferMenu(env, folderOf(args))
    },
    {
      button: {
        registry: env.toolbars,
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
}

/**
 * Open the transfer menu for `folder` under the toolbar's "Files" button. Built
 * here, not declared: `jupyter.lab.menus` knows the main menu bar and context
 * menus, not a toolbar button's drop-down, and its items carry this notebook's
 * folder as their argument.
 */
function openTransferMenu(env: ITransferEnv, folder: string): void {
  const { app, canWrite } = env;
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
