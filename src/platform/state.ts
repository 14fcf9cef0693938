/**
 * What an answer of the platform means for the whole page, and the sentences
 * for it: pure functions, so they can be tested without a DOM or a server.
 *
 * - 503 `notebook_stopped`: the notebook's server is gone (the idle culler, a
 *   crash, a stop); the answer says why and where to restart it.
 * - 404 `no_access`: the share this visitor used ended or was revoked.
 * - 401 `login`: the notebook origin's log-in expired; a reload logs in again.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { restartTarget } from './format';
import { IPlatformError } from '../apiTypes';
import { Access, IServerInfo } from '../tokens';

/** A problem of the whole page. */
export type PlatformProblem =
  | {
      kind: 'stopped';
      message: string;
      /** "stopped for idleness"; '' when the platform did not say. */
      reason: string;
      /** "idle for 62 minutes (limit 60)"; '' when nothing more is known. */
      detail: string;
      /** idle, lifetime, reclaim, admin, user, died, not_running */
      cause: string;
      /** stopped, stopping, starting, queued */
      state: string;
      restartUrl: string | null;
      portalUrl: string | null;
    }
  | { kind: 'revoked'; message: string; portalUrl: string | null }
  | { kind: 'login'; message: string };

/** The page-wide problem an answer reports, or null for an ordinary one. */
export function problemOf(
  status: number,
  body: IPlatformError | null,
  pageUrl: string
): PlatformProblem | null {
  const code = body?.code ?? '';
  const message = body?.message ?? '';
  const url = (value: string | undefined): string | null =>
    value ? restartTarget(value, pageUrl) : null;
  if (status === 503 && code === 'notebook_stopped') {
    return {
      kind: 'stopped',
      message,
      reason: body?.reason ?? '',
      detail: body?.detail ?? '',
      cause: body?.cause ?? 'not_running',
      state: body?.state ?? 'stopped',
      restartUrl: url(body?.restart_url),
      portalUrl: url(body?.portal_url)
    };
  }
  if ((status === 404 || status === 403) && code === 'no_access') {
    return { kind: 'revoked', message, portalUrl: url(body?.portal_url) };
  }
  if (status === 401 && code === 'login') {
    return { kind: 'login', message };
  }
  return null;
}

/** "Stopped for idleness: idle for 62 minutes (limit 60)". */
function capitalised(text: string): string {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}

/** The dialog for a notebook that is not running. */
export interface IStoppedDialogText {
  title: string;
  body: string;
  /** The button that goes to the start page. */
  accept: string;
  dismiss: string;
}

/**
 * "Your notebook stopped: Stopped for idleness: idle for 62 minutes (limit
 * 60) — restart it to go on." The owner restarts; a visitor is told only the
 * owner can, and may open the start page to see its state.
 */
export function stoppedDialogText(
  problem: Extract<PlatformProblem, { kind: 'stopped' }>,
  isOwner: boolean,
  trans: TranslationBundle
): IStoppedDialogText {
  const reason = capitalised(problem.reason || trans.__('it is not running'));
  const why = problem.detail
    ? trans.__('%1: %2', reason, problem.detail)
    : reason;
  const starting = problem.state === 'starting' || problem.state === 'queued';
  if (starting) {
    return {
      title: trans.__('Your notebook is restarting'),
      body: trans.__(
        '%1. Follow its start on the start page; this page cannot reach it until then.',
        why
      ),
      accept: trans.__('Open the start page'),
      dismiss: trans.__('Stay here')
    };
  }
  if (problem.cause === 'idle') {
    const detail = problem.detail
      ? trans.__('%1.', capitalised(problem.detail))
      : trans.__('Nothing ran in it for a while.');
    return {
      title: trans.__('Your notebook stopped for idleness'),
      body: isOwner
        ? trans.__(
            'It stopped for idleness — restart it to go on. %1 Files you saved are kept; what ran in its kernels is gone.',
            detail
          )
        : trans.__(
            'This notebook stopped for idleness. %1 Only its owner can restart it; what you saved is kept.',
            detail
          ),
      accept: isOwner ? trans.__('Restart') : trans.__('Open the start page'),
      dismiss: trans.__('Stay here')
    };
  }
  return {
    title: trans.__('Your notebook stopped'),
    body: isOwner
      ? trans.__(
          'Your notebook stopped: %1 — restart it to go on. Files you saved are kept.',
          why
        )
      : trans.__(
          'This notebook stopped: %1. Only its owner can restart it.',
          why
        ),
    accept: isOwner ? trans.__('Restart') : trans.__('Open the start page'),
    dismiss: trans.__('Stay here')
  };
}

/** The dialog for a visitor whose share ended. */
export function revokedDialogText(
  info: IServerInfo | null,
  trans: TranslationBundle
): { title: string; body: string; accept: string; dismiss: string } {
  const owner = info?.notebook?.owner ?? trans.__('its owner');
  const name = info?.notebook?.name ?? '';
  return {
    title: trans.__('Access revoked'),
    body: name
      ? trans.__(
          'Your access to %1\'s notebook "%2" ended: its share was revoked or expired. Nothing more can be opened or saved here.',
          owner,
          name
        )
      : trans.__(
          'Your access to this notebook ended: its share was revoked or expired.'
        ),
    accept: trans.__('Back to cgu-lab portal'),
    dismiss: trans.__('Stay here')
  };
}

/** The status-bar label for an access, "Access revoked" once it ended. */
export function accessLabel(
  access: Access | 'revoked',
  trans: TranslationBundle
): string | null {
  switch (access) {
    case 'read':
      return trans.__('Read-only');
    case 'edit':
      return trans.__('Shared: can edit');
    case 'revoked':
      return trans.__('Access revoked');
    default:
      return null;
  }
}

/** What to tell a visitor whose access changed while the page was open; null when nothing. */
export function accessChangeText(
  before: Access,
  after: Access,
  trans: TranslationBundle
): string | null {
  if (before === after) {
    return null;
  }
  if (after === 'read') {
    return trans.__(
      'This notebook is now shared with you read-only: reload the page to continue read-only.'
    );
  }
  if (after === 'edit') {
    return trans.__(
      'You may now edit this notebook: reload the page to start editing.'
    );
  }
  return trans.__('Your access to this notebook changed: reload the page.');
}
