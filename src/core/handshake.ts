/**
 * The handshake turns "the server extension is missing" into a sentence the
 * user can act on, instead of silent 404s from every later feature, and
 * refuses a server extension of another release than this lab extension (a
 * page loaded before an update, talking to a server started after it, or the
 * other way round): the user is told to reload, and no feature acts on it.
 */
import { ServerConnection } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import { errorMessage, requestAPI } from '../api';
import { ICguLabSession, IServerInfo } from '../tokens';
import { LAB_EXTENSION_VERSION } from '../version';

export type HandshakeResult =
  | { ok: true; info: IServerInfo }
  | {
      ok: false;
      message: string;
      /** True when reloading the page is the way out (releases differ). */
      reload?: boolean;
    };

/**
 * A release as both sides spell it: package.json's "1.2.0-alpha.1" is
 * Python's "1.2.0a1", "-beta.2" is "b2", "-rc.1" is "rc1", "-dev.0" ".dev0".
 */
export function normalizeRelease(version: string): string {
  return version
    .trim()
    .toLowerCase()
    .replace(/^v/, '')
    .replace(/[-.]?(alpha|a)[-.]?(?=\d)/, 'a')
    .replace(/[-.]?(beta|b)[-.]?(?=\d)/, 'b')
    .replace(/[-.]?(rc|c)[-.]?(?=\d)/, 'rc')
    .replace(/[-.]?dev[-.]?(?=\d)/, '.dev');
}

/** Whether the lab extension and the server extension are one release. */
export function sameRelease(lab: string, server: string): boolean {
  return normalizeRelease(lab) === normalizeRelease(server);
}

/** What to do when the page and the notebook server run different releases. */
export function versionMismatchMessage(
  trans: TranslationBundle,
  lab: string,
  server: string
): string {
  return trans.__(
    'cgu-lab is being updated: this page has version %1 but the notebook server runs version %2. Reload the page to use the new version; until then the cgu-lab features are off in this tab. If this stays after a reload, restart the notebook from the portal.',
    lab,
    server
  );
}

/** What to do when the server extension does not answer. */
export function missingExtensionMessage(trans: TranslationBundle): string {
  return trans.__(
    'The cgu-lab server extension is not enabled in this notebook server. Run "pip install cgu_lab" in the notebook environment and restart the server (or ask your administrator).'
  );
}

export async function handshake(
  trans: TranslationBundle,
  fetchInfo: () => Promise<IServerInfo> = () => requestAPI<IServerInfo>('info'),
  labVersion: string = LAB_EXTENSION_VERSION
): Promise<HandshakeResult> {
  try {
    const info = await fetchInfo();
    const server = typeof info.version === 'string' ? info.version : '';
    if (!sameRelease(labVersion, server)) {
      return {
        ok: false,
        reload: true,
        message: versionMismatchMessage(
          trans,
          labVersion,
          server || trans.__('unknown')
        )
      };
    }
    return { ok: true, info };
  } catch (error) {
    if (
      error instanceof ServerConnection.ResponseError &&
      error.response.status === 404
    ) {
      return { ok: false, message: missingExtensionMessage(trans) };
    }
    return { ok: false, message: errorMessage(error, trans) };
  }
}

/** The session the other plugins see, from the handshake's result. */
export function sessionFromHandshake(result: HandshakeResult): ICguLabSession {
  if (!result.ok) {
    return {
      info: null,
      access: null,
      isOwner: false,
      problem: result.message
    };
  }
  return {
    info: result.info,
    access: result.info.access,
    isOwner: result.info.access === 'owner',
    problem: null
  };
}
