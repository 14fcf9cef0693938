/**
 * `cgu-lab:clipboard` — the clipboard of the laptop, inside the notebook:
 *
 * - this tab lends its clipboard to the notebook's kernels and terminals, so
 *   `xclip`, `xsel`, `pandas.read_clipboard()`, `DataFrame.to_clipboard()`
 *   and pyperclip use it (bridge.ts, access.ts; the server's side is
 *   cgu_lab/notebook/clipboard/);
 * - "Paste Image/File from Clipboard" saves what the clipboard holds as a new
 *   file in the file browser's folder (palette, File menu, the file browser's
 *   context menu, a button on every notebook's toolbar);
 * - "Let the Notebook Use the Clipboard" asks the browser's permission ahead
 *   of time, with a click.
 *
 * For the owner and editors only: a read-only viewer runs no code, and the
 * server refuses them the channel too.
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
import { PathExt, URLExt } from '@jupyterlab/coreutils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { Contents, ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { pasteIcon } from '@jupyterlab/ui-components';
import { registerCommand } from '../commands';
import { formatBytes } from '../format';
import { DOMAIN, ICguLabSession } from '../tokens';
import { BrowserClipboard } from './access';
import { ClipboardBridge } from './bridge';
import { PasteProblem, pasteIntoFolder } from './pasteFile';
import {
  DEFAULT_SETTINGS,
  IClipboardSettings,
  mustConfirm,
  settingsFrom
} from './protocol';

/** The commands of the Clipboard feature. */
export namespace ClipboardCommandIDs {
  export const pasteFile = 'cgu-lab:clipboard-paste-file';
  export const allow = 'cgu-lab:clipboard-allow';
}

/** The channel's websocket address, through the same base URL as the page. */
function channelUrl(settings: ServerConnection.ISettings): string {
  let url = URLExt.join(settings.wsUrl, 'cgu-lab/clipboard/channel');
  if (settings.appendToken && settings.token) {
    url += `?token=${encodeURIComponent(settings.token)}`;
  }
  return url;
}

async function pasteFileInto(
  folder: string,
  contents: Contents.IManager,
  browser: IDefaultFileBrowser | null,
  trans: TranslationBundle
): Promise<void> {
  try {
    const pasted = await pasteIntoFolder(contents, folder, trans);
    Notification.success(
      trans.__(
        'Saved %1 (%2) from the clipboard.',
        pasted.path,
        formatBytes(pasted.size)
      ),
      { autoClose: 6000 }
    );
    if (browser && browser.model.path === folder) {
      await browser.model.refresh();
      await browser.selectItemByName(PathExt.basename(pasted.path));
    }
  } catch (error) {
    Notification.error(
      error instanceof PasteProblem
        ? error.message
        : trans.__(
            'The clipboard could not be saved as a file: %1',
            (error as Error).message || String(error)
          ),
      { autoClose: 15_000 }
    );
  }
}

function registerPasteFileCommand(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  browser: IDefaultFileBrowser | null,
  palette: ICommandPalette | null,
  toolbars: IToolbarWidgetRegistry | null
): void {
  const contents = app.serviceManager.contents;
  registerCommand(
    app,
    ClipboardCommandIDs.pasteFile,
    {
      label: trans.__('Paste Image/File from Clipboard'),
      caption: trans.__(
        "Save what this computer's clipboard holds (an image as PNG, text as .txt) as a new file in the current folder"
      ),
      icon: pasteIcon,
      execute: async args => {
        const path = typeof args.path === 'string' ? args.path : null;
        const folder =
          path !== null
            ? PathExt.dirname(contents.localPath(path))
            : (browser?.model.path ?? '');
        await pasteFileInto(folder, contents, browser, trans);
      }
    },
    {
      palette,
      button: {
        registry: toolbars,
        id: 'cgu-clipboard-paste',
        label: trans.__('Paste file'),
        tooltip: trans.__(
          "Save the image or text on this computer's clipboard as a file next to this notebook"
        ),
        icon: pasteIcon,
        dataCgu: 'clipboard-paste-button'
      }
    }
  );
}

function registerAllowCommand(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  palette: ICommandPalette | null
): void {
  registerCommand(
    app,
    ClipboardCommandIDs.allow,
    {
      label: trans.__('Let the Notebook Use the Clipboard'),
      caption: trans.__(
        "Ask the browser now for the permission that xclip, xsel and pandas.read_clipboard() need to read this computer's clipboard"
      ),
      execute: async () => {
        try {
          await navigator.clipboard.readText();
          Notification.success(
            trans.__(
              "Programs in this notebook can now read this computer's clipboard while this tab is in front."
            ),
            { autoClose: 6000 }
          );
        } catch {
          Notification.error(
            trans.__(
              'Your browser refused this page access to the clipboard. Allow "Clipboard" in the site settings (the icon left of the address) and try again.'
            ),
            { autoClose: 15_000 }
          );
        }
      }
    },
    { palette }
  );
}

interface ISettingsHolder {
  current: IClipboardSettings;
}

function loadClipboardSettings(
  settingRegistry: ISettingRegistry | null,
  holder: ISettingsHolder,
  apply: () => void
): Promise<void> {
  return settingRegistry
    ? settingRegistry
        .load(clipboardPlugin.id)
        .then(loaded => {
          const read = () => {
            holder.current = settingsFrom(key => loaded.get(key).composite);
            apply();
          };
          loaded.changed.connect(read);
          holder.current = settingsFrom(key => loaded.get(key).composite);
        })
        .catch(reason =>
          console.error('cgu-lab: cannot load the clipboard settings', reason)
        )
    : Promise.resolve();
}

export const clipboardPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:clipboard',
  description:
    "Lends this computer's clipboard to the notebook (xclip, xsel, pandas) and pastes images or text into files.",
  autoStart: true,
  requires: [ICguLabSession],
  optional: [
    IDefaultFileBrowser,
    ICommandPalette,
    IToolbarWidgetRegistry,
    ISettingRegistry,
    ITranslator
  ],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    browser: IDefaultFileBrowser | null,
    palette: ICommandPalette | null,
    toolbars: IToolbarWidgetRegistry | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null
  ) => {
    const info = session.info;
    if (!info || info.access === 'read' || (info.scope?.length ?? 0) > 0) {
      return; // a read-only viewer runs no code and writes no file
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const serverSettings = app.serviceManager.serverSettings;
    const settings: ISettingsHolder = { current: DEFAULT_SETTINGS };
    const clipboard = new BrowserClipboard(trans);
    const bridge = new ClipboardBridge({
      url: () => channelUrl(serverSettings),
      clipboard,
      trans,
      policy: () => ({
        confirm: mustConfirm(settings.current.confirmReads, session.isOwner),
        announce: settings.current.announceReads
      })
    });

    registerPasteFileCommand(app, trans, browser, palette, toolbars);
    registerAllowCommand(app, trans, palette);

    const apply = () =>
      settings.current.kernelBridge ? bridge.start() : bridge.stop();
    const settingsLoaded = loadClipboardSettings(
      settingRegistry,
      settings,
      apply
    );
    void Promise.all([app.restored, settingsLoaded]).then(apply);
  }
};
