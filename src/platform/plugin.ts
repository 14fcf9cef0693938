/**
 * The plugins of the page's link with the platform:
 *
 * - `cgu-lab:connection` answers JupyterLab's "connection lost" hook
 *   (`IConnectionLost`, in place of the generic "Server Connection Error"
 *   dialog): it asks the platform what happened and says that instead.
 * - `cgu-lab:platform` watches the notebook and the visitor's access (see
 *   platform.ts), holds JupyterLab's own requests and connections while the
 *   notebook is stopped and ends them with the access (gate.ts), and offers
 *   "Check Connection to cgu-lab" in the palette.
 * - `cgu-lab:portal` is "Back to cgu-lab portal": the command behind the File
 *   menu item and the top-bar button that `schema/portal.json` declares.
 */
import {
  IConnectionLost,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';
import { IGatedSettings, ServiceGate } from './gate';
import { PlatformWatch, platformWatch, provideWatch } from './platform';
import { restartTarget } from './format';
import { registerCommand } from '../commands';
import { platformProblem } from '../api';
import { CommandIDs, DOMAIN, ICguLabSession } from '../tokens';

const PORTAL_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
  '<path class="jp-icon3" fill="#616161" d="M10 20v-6h4v6h5v-8h3L12 3 2 12h3v8z"/></svg>';

/** The portal's icon (a house: the way home). */
export const portalIcon = new LabIcon({
  name: 'cgu-lab:portal',
  svgstr: PORTAL_SVG
});

/** Replaces JupyterLab's "Server Connection Error" with what the platform says. */
export const connectionPlugin: JupyterFrontEndPlugin<IConnectionLost> = {
  id: 'cgu-lab:connection',
  description:
    'Says why the notebook server cannot be reached (stopped for idleness, stopped, access revoked) and how to go on.',
  autoStart: true,
  provides: IConnectionLost,
  optional: [ITranslator],
  activate: (
    app: JupyterFrontEnd,
    translator: ITranslator | null
  ): IConnectionLost => {
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    let told = false;
    return async () => {
      const watch = await platformWatch();
      if (watch) {
        await watch.checkNow();
        return;
      }
      // No handshake (the server extension did not answer): still no generic
      // error, but what to do. A reload lands on the start page if it stopped.
      if (!told) {
        told = true;
        Notification.warning(
          trans.__(
            'This notebook cannot be reached right now. Reload the page: if it stopped, you get to its start page.'
          ),
          {
            autoClose: false,
            actions: [
              {
                label: trans.__('Reload'),
                callback: () => window.location.reload()
              }
            ]
          }
        );
      }
    };
  }
};

/** Watches the notebook and the visitor's access. */
export const platformPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:platform',
  description:
    'Tells the user when the notebook stopped or their access ended, with the way to go on.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [ITranslator, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    translator: ITranslator | null,
    palette: ICommandPalette | null
  ) => {
    if (!session.info) {
      provideWatch(null);
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    // JupyterLab's own services send through this one settings object.
    let watch: PlatformWatch | null = null;
    const gate = new ServiceGate(
      app.serviceManager.serverSettings as unknown as IGatedSettings,
      {
        report: (status, body) => platformProblem.emit({ status, body }),
        notAnswering: () => watch?.checkSoon()
      }
    );
    watch = new PlatformWatch({ session, trans, gate });
    provideWatch(watch);
    registerCommand(
      app,
      CommandIDs.checkPlatform,
      {
        label: trans.__('Check Connection to cgu-lab'),
        caption: trans.__(
          'Ask the platform now whether this notebook runs and you still have access'
        ),
        execute: () => watch.checkNow()
      },
      { palette }
    );
  }
};

/**
 * "Back to cgu-lab portal". The command exists from the start (so the File
 * menu and the top bar, built from the settings schema, show it at once); it
 * learns the portal's address from the handshake.
 */
export const portalPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:portal',
  description:
    'A File menu item and a top-bar button back to the cgu-lab portal.',
  autoStart: true,
  optional: [ITranslator, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    translator: ITranslator | null,
    palette: ICommandPalette | null
  ) => {
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    registerCommand(
      app,
      CommandIDs.openPortal,
      {
        label: trans.__('Back to cgu-lab portal'),
        caption: trans.__(
          'Go back to the cgu-lab portal: your notebooks, courses and shares'
        ),
        icon: args => (args.toolbar ? portalIcon : undefined),
        execute: async () => {
          const watch = await platformWatch();
          const portal = watch?.portalUrl
            ? restartTarget(watch.portalUrl, window.location.href)
            : null;
          if (!portal) {
            Notification.warning(
              trans.__(
                "This notebook does not know the portal's address; open the portal from your bookmarks."
              ),
              { autoClose: 6000 }
            );
            return;
          }
          window.location.assign(portal);
        }
      },
      { palette }
    );
  }
};
