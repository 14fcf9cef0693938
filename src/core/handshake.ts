/**
 * The handshake turns "the server extension is missing" into a sentence the
 * user can act on, instead of silent 404s from every later feature.
 */
import { ServerConnection } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import { errorMessage, requestAPI } from '../api';
import { ICguLabSession, IServerInfo } from '../tokens';

export type HandshakeResult =
  { ok: true; info: IServerInfo } | { ok: false; message: string };

/** What to do when the server extension does not answer. */
export function missingExtensionMessage(trans: TranslationBundle): string {
  return trans.__(
    'The cgu-lab server extension is not enabled in this notebook server. Run "pip install cgu_lab" in the notebook environment and restart the server (or ask your administrator).'
  );
}

export async function handshake(
  trans: TranslationBundle,
  fetchInfo: () => Promise<IServerInfo> = () => requestAPI<IServerInfo>('info')
): Promise<HandshakeResult> {
  try {
    return { ok: true, info: await fetchInfo() };
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
