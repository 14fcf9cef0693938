/**
 * One way to call the cgu-lab server extension: every request goes through
 * `ServerConnection.makeRequest`, so the notebook's XSRF handling and base URL
 * come for free, and every failure surfaces as a `ServerConnection.ResponseError`
 * whose message is the server's own readable sentence (never the raw body), or
 * empty when it has none: `errorMessage` then says what happened from the
 * status, in the user's language.
 *
 * Answers that concern the whole page rather than one call (the notebook
 * stopped, the share ended, the log-in expired) are also announced on
 * `platformProblem`, so one place (platform.ts) tells the user once.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import {
  IAssignment,
  IBroadcastCopied,
  ICourses,
  ICullingStatus,
  IDirectory,
  IFileListing,
  IFileStat,
  IPlatformError,
  IQuota,
  IResizeRequest,
  IResizeResponse,
  IResources,
  IShare,
  IShareRequest,
  ISharedWithMe,
  ISubmission,
  ISubmitRequest,
  ITemplateCreated,
  ITemplateFiles,
  ITemplateOptions,
  ITemplateRequest
} from './apiTypes';
import { IServerInfo } from './tokens';

/** The namespace of every route of the server extension. */
export const API_NAMESPACE = 'cgu-lab';

/**
 * Pull the readable message out of an error body: the server extension and the
 * controller both answer `{"message": "..."}`.
 */
export function messageFromBody(body: unknown, fallback: string): string {
  if (body && typeof body === 'object' && 'message' in body) {
    const message = (body as { message: unknown }).message;
    if (typeof message === 'string' && message.trim()) {
      return message;
    }
  }
  return fallback;
}

/** The error codes that are about the page, not one request. */
export const PAGE_PROBLEMS = new Set([
  'notebook_stopped',
  'no_access',
  'login'
]);

/** A failed answer's status and body, for platform.ts. */
export interface IProblemReport {
  status: number;
  body: IPlatformError;
}

/** Emitted for every answer whose code is one of `PAGE_PROBLEMS`. */
export const platformProblem = new Signal<unknown, IProblemReport>({});

/** The body as an error object when it is one (`{message, code}`), else null. */
export function platformError(body: unknown): IPlatformError | null {
  if (
    body &&
    typeof body === 'object' &&
    typeof (body as { message?: unknown }).message === 'string'
  ) {
    return body as IPlatformError;
  }
  return null;
}

/** Whether this page's access ended (platform.ts): nothing is asked any more. */
let ended = false;

/**
 * The visitor's access to this notebook ended: from now on every request of
 * the extension waits for ever instead of reaching the server (which would
 * only refuse it), so no poller of the extension goes on asking.
 */
export function endRequests(): void {
  ended = true;
}

/** Whether this page's access ended (pollers stand by for good). */
export function requestsEnded(): boolean {
  return ended;
}

/**
 * Call a route of the server extension and return its JSON body.
 *
 * @param endPoint path below `cgu-lab/`, e.g. `info`
 * @param init request options (method, body as a JSON string)
 */
export async function requestAPI<T>(
  endPoint = '',
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  if (ended) {
    return new Promise<T>(() => undefined);
  }
  const url = URLExt.join(settings.baseUrl, API_NAMESPACE, endPoint);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new ServerConnection.NetworkError(error as TypeError);
  }
  const text = await response.text();
  let data: unknown = text;
  if (text.length > 0) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!response.ok) {
    const problem = platformError(data);
    if (problem?.code && PAGE_PROBLEMS.has(problem.code)) {
      platformProblem.emit({ status: response.status, body: problem });
    }
    // No readable message: left empty, so `errorMessage` says it in the
    // user's language from the status (a sentence here could not be).
    throw new ServerConnection.ResponseError(
      response,
      messageFromBody(data, '')
    );
  }
  return data as T;
}

/**
 * A sentence for an answer without a readable message (an HTML error page
 * from something between the browser and the platform, an empty body).
 */
export function statusSentence(
  status: number,
  trans: TranslationBundle
): string {
  if (status === 401 || status === 403) {
    return trans.__(
      'You may not do this here; reload the page if you were logged out.'
    );
  }
  if (status === 404) {
    return trans.__(
      'This is not there (any more); reload the page and try again.'
    );
  }
  if (status >= 500) {
    return trans.__(
      'The platform could not answer (error %1); try again in a moment.',
      status
    );
  }
  return trans.__('The request was refused (error %1); try again.', status);
}

/** Send a JSON body with a method. */
function jsonInit(method: string, body?: unknown): RequestInit {
  return body === undefined
    ? { method }
    : {
        method,
        body: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json' }
      };
}

/**
 * The endpoints of the server extension, typed. Each one goes through
 * `requestAPI`, so failures are `ResponseError`s carrying the server's message.
 */
export namespace CguAPI {
  export const info = (): Promise<IServerInfo> =>
    requestAPI<IServerInfo>('info');

  export const resources = (): Promise<IResources> =>
    requestAPI<IResources>('resources');

  export const quota = (): Promise<IQuota> => requestAPI<IQuota>('quota');

  export const resize = (body: IResizeRequest): Promise<IResizeResponse> =>
    requestAPI<IResizeResponse>('resize', jsonInit('POST', body));

  export const shares = (): Promise<IShare[]> => requestAPI<IShare[]>('shares');

  export const createShare = (body: IShareRequest): Promise<IShare> =>
    requestAPI<IShare>('shares', jsonInit('POST', body));

  export const deleteShare = (id: number): Promise<{ message: string }> =>
    requestAPI<{ message: string }>(
      `shares/${encodeURIComponent(String(id))}`,
      jsonInit('DELETE')
    );

  export const directory = (query: string): Promise<IDirectory> =>
    requestAPI<IDirectory>(`directory?q=${encodeURIComponent(query)}`);

  export const sharedWithMe = (): Promise<ISharedWithMe[]> =>
    requestAPI<ISharedWithMe[]>('shared-with-me');

  export const culling = (): Promise<ICullingStatus> =>
    requestAPI<ICullingStatus>('culling');

  export const keepRunning = (): Promise<{ message: string }> =>
    requestAPI<{ message: string }>('keep-running', jsonInit('POST'));

  /** Which of `paths` exist in the home, with their sizes (owner only). */
  export const fileStat = (paths: ReadonlyArray<string>): Promise<IFileStat> =>
    requestAPI<IFileStat>(
      'files/stat?' + paths.map(p => `path=${encodeURIComponent(p)}`).join('&')
    );

  /** The files this notebook's template brought into the home. */
  export const templateFiles = (): Promise<ITemplateFiles> =>
    requestAPI<ITemplateFiles>('templates/files');

  /** A folder of the home ('' = the home itself), for the file picker. */
  export const files = (path: string): Promise<IFileListing> =>
    requestAPI<IFileListing>(`files?path=${encodeURIComponent(path)}`);

  export const templateOptions = (): Promise<ITemplateOptions> =>
    requestAPI<ITemplateOptions>('templates/options');

  export const createTemplate = (
    body: ITemplateRequest
  ): Promise<ITemplateCreated> =>
    requestAPI<ITemplateCreated>('templates', jsonInit('POST', body));

  export const assignments = (): Promise<IAssignment[]> =>
    requestAPI<IAssignment[]>('assignments');

  export const submit = (body: ISubmitRequest): Promise<ISubmission> =>
    requestAPI<ISubmission>('submit', jsonInit('POST', body));

  export const courses = (): Promise<ICourses> =>
    requestAPI<ICourses>('courses');

  export const coursesSeen = (): Promise<{ message: string }> =>
    requestAPI<{ message: string }>('courses/seen', jsonInit('POST'));

  /** Copy a live view's notebook into this notebook's home. */
  export const copyBroadcast = (
    group: string,
    id: number
  ): Promise<IBroadcastCopied> =>
    requestAPI<IBroadcastCopied>(
      `courses/${encodeURIComponent(group)}/broadcasts/${id}/copy`,
      jsonInit('POST', {})
    );
}

/**
 * A readable sentence out of anything thrown by a request: the server's own
 * message, or a sentence for the failure (no network, a bare status).
 */
export function errorMessage(error: unknown, trans: TranslationBundle): string {
  if (error instanceof ServerConnection.NetworkError) {
    return trans.__(
      'The platform cannot be reached: check your network connection and try again.'
    );
  }
  if (error instanceof Error && error.message) {
    return error.message;
  }
  if (error instanceof ServerConnection.ResponseError) {
    return statusSentence(error.response.status, trans);
  }
  if (typeof error === 'string' && error) {
    return error;
  }
  return trans.__('Something went wrong; please try again.');
}
