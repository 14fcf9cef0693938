/**
 * `cgu-lab:core` — the handshake with the server extension; provides the
 * session (who is looking, with what access) to the other plugins. (The way
 * back to the portal is `cgu-lab:portal`.)
 */
import { JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { handshake, sessionFromHandshake } from './handshake';
import { ICguLabSession } from '../tokens';

/**
 * Core plugin: checks the server extension answers and provides the session
 * to the other plugins.
 */
export const corePlugin: JupyterFrontEndPlugin<ICguLabSession> = {
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
