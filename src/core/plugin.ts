/**
 * `cgu-lab:core` — the handshake with the server extension; provides the
 * session (who is looking, with what access) to the other plugins, or none
 * (and a message with Reload) when the server extension is of another
 * release. (The way
 * back to the portal is `cgu-lab:portal`.)
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { handshake, sessionFromHandshake } from './handshake';
import { DOMAIN, ICguLabSession } from '../tokens';

/**
 * Core plugin: checks the server extension answers and provides the session
 * to the other plugins.
 */
export const corePlugin: JupyterFrontEndPlugin<ICguLabSession> = {
  id: 'cgu-lab:core',
  description: 'Connects JupyterLab to the cgu-lab platform.',
  autoStart: true,
  provides: ICguLabSession,
  optional: [ITranslator],
  activate: async (
    app: JupyterFrontEnd,
    translator: ITranslator | null
  ): Promise<ICguLabSession> => {
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const result = await handshake(trans);
    const session = sessionFromHandshake(result);
    if (!result.ok) {
      Notification.warning(result.message, {
        autoClose: false,
        actions: result.reload
          ? [
              {
                label: trans.__('Reload'),
                callback: () => window.location.reload()
              }
            ]
          : []
      });
      if (result.reload) {
        // A landmark for UI tests: the releases differ, nothing acts.
        document.body.dataset.cguVersionMismatch = 'true';
      }
      return session;
    }
    // A landmark for styles and UI tests: <body data-cgu-access="owner|edit|read">.
    document.body.dataset.cguAccess = result.info.access;
    return session;
  }
};
