/**
 * `cgu-lab:apps` — the "Apps" section of the launcher: a Linux desktop,
 * VS Code and the apps an administrator declared for this notebook's
 * environment (cgu_lab/notebook/apps/ lists them and runs them through
 * jupyter-server-proxy).
 *
 * The desktop opens in a JupyterLab tab (desktop.ts); VS Code and web apps
 * in a browser tab of their own, on the notebook's origin; the web browser
 * as a window on the desktop (the desktop first, then `POST apps/browser`
 * until the desktop runs). A read-only viewer sees only "Watch the desktop". The portal's links open an app with
 * `?cgu-app=<name>` in the lab's address.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, MainAreaWidget } from '@jupyterlab/apputils';
import { ILauncher } from '@jupyterlab/launcher';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { ServerConnection } from '@jupyterlab/services';
import { requestAPI } from '../api';
import { DOMAIN, ICguLabSession, PALETTE_CATEGORY } from '../tokens';
import { DesktopPanel } from './desktop';
import { iconFor } from './icons';
import {
  appPageUrl,
  BROWSER_RETRY,
  BROWSER_WAIT,
  DATABASE_KINDS,
  desktopSocketUrl,
  IApp,
  IAppList,
  openCommandId
} from './protocol';

/** The URL parameter the portal's app links carry. */
const OPEN_PARAMETER = 'cgu-app';

/** Opens the desktop in a tab, or brings its open tab to the front. */
function desktopOpener(
  app: JupyterFrontEnd,
  trans: TranslationBundle
): (entry: IApp) => void {
  const settings = app.serviceManager.serverSettings;
  let desktop: MainAreaWidget<DesktopPanel> | null = null;
  return (entry: IApp): void => {
    if (desktop && !desktop.isDisposed) {
      app.shell.activateById(desktop.id);
      return;
    }
    const panel = new DesktopPanel({
      url: desktopSocketUrl(settings.wsUrl, entry),
      viewOnly: !entry.interactive,
      trans
    });
    desktop = new MainAreaWidget({ content: panel });
    desktop.id = 'cgu-lab-desktop-area';
    desktop.title.label = panel.title.label;
    desktop.title.icon = iconFor('desktop', entry.name, '');
    desktop.title.closable = true;
    app.shell.add(desktop, 'main');
    app.shell.activateById(desktop.id);
  };
}

/** Opens the desktop, then a browser window on it once the desktop runs. */
async function openBrowser(
  openDesktop: (entry: IApp) => void,
  desktop: IApp | undefined
): Promise<void> {
  if (desktop) {
    openDesktop(desktop);
  }
  const until = Date.now() + BROWSER_WAIT;
  for (;;) {
    try {
      await requestAPI('apps/browser', { method: 'POST', body: '{}' });
      return;
    } catch (error) {
      const starting =
        error instanceof ServerConnection.ResponseError &&
        error.response.status === 409;
      if (!starting || Date.now() > until) {
        throw error;
      }
      await new Promise(resolve => setTimeout(resolve, BROWSER_RETRY));
    }
  }
}

/** The command that opens one app, in the launcher and the palette. */
function addAppCommand(
  app: JupyterFrontEnd,
  entry: IApp,
  rank: number,
  options: {
    trans: TranslationBundle;
    category: string;
    openDesktop: (entry: IApp) => void;
    desktop: IApp | undefined;
    launcher: ILauncher | null;
    palette: ICommandPalette | null;
  }
): void {
  const { trans, category, openDesktop, desktop, launcher, palette } = options;
  const settings = app.serviceManager.serverSettings;
  const command = openCommandId(entry.name);
  const icon = iconFor(entry.kind, entry.name, entry.icon);
  const label =
    entry.kind === 'desktop' && !entry.interactive
      ? trans.__('Watch the desktop')
      : entry.title;
  app.commands.addCommand(command, {
    label,
    caption:
      entry.kind === 'desktop'
        ? trans.__('A Linux desktop in this notebook, in a tab')
        : entry.kind === 'browser'
          ? trans.__("A web browser on this notebook's desktop")
          : DATABASE_KINDS.has(entry.kind)
            ? trans.__(
                "This notebook's %1 database, in its web client in a new browser tab",
                entry.title
              )
            : trans.__('%1 in a new browser tab', entry.title),
    icon,
    execute: () => {
      if (entry.kind === 'desktop') {
        openDesktop(entry);
      } else if (entry.kind === 'browser') {
        return openBrowser(openDesktop, desktop);
      } else {
        window.open(appPageUrl(settings.baseUrl, entry), '_blank');
      }
    }
  });
  launcher?.add({ command, category, rank });
  palette?.addItem({ command, category: PALETTE_CATEGORY });
}

/** Opens the app the portal's link names, once the layout is restored. */
function openRequestedApp(app: JupyterFrontEnd, list: IAppList): void {
  const wanted = new URLSearchParams(window.location.search).get(
    OPEN_PARAMETER
  );
  if (wanted && list.apps.some(a => a.name === wanted)) {
    // Not awaited: the layout is restored only once every plugin has activated.
    void app.restored.then(() => app.commands.execute(openCommandId(wanted)));
  }
}

export const appsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:apps',
  description:
    'The Apps section of the launcher: a Linux desktop, VS Code and the apps of this environment.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [ILauncher, ICommandPalette, ITranslator],
  activate: async (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    launcher: ILauncher | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ) => {
    const info = session.info;
    if (!info || (info.scope?.length ?? 0) > 0) {
      return; // a single-file share has no apps
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    let list: IAppList;
    try {
      list = await requestAPI<IAppList>('apps');
    } catch {
      return; // no apps here (an older server, or none offered)
    }
    const openDesktop = desktopOpener(app, trans);
    const category = trans.__('Apps');
    const desktop = list.apps.find(entry => entry.kind === 'desktop');
    list.apps.forEach((entry, rank) =>
      addAppCommand(app, entry, rank, {
        trans,
        category,
        openDesktop,
        desktop,
        launcher,
        palette
      })
    );
    openRequestedApp(app, list);
  }
};
