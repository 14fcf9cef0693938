/**
 * The upload's way to the server: JupyterLab's contents API for the files
 * (the same PUTs, chunk numbers and base64 as its own uploader, so the
 * request guard, the contents manager and save hooks all apply), and the
 * server extension's `cgu-lab/transfer/*` routes for the plan and the
 * extraction. Every request goes through `ServerConnection.makeRequest`
 * (base URL, XSRF), and every failure becomes a `TransferError` carrying the
 * server's `{message, code}`, marked retryable when the connection dropped
 * or the proxy said the notebook did not answer (502, 503, 504).
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import {
  CancelledError,
  ITransport,
  IUploadPlan,
  TransferError
} from './upload';

const RETRYABLE = new Set([502, 503, 504]);

/** What `POST cgu-lab/transfer/extract` answers. */
export interface IExtracted {
  folder: string;
  into: string | null;
  entries: string[];
  files: number;
  folders: number;
  bytes: number;
  removed?: boolean;
}

/** A blob's bytes as base64, as the contents API takes them. */
function base64Of(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(',', 2)[1] ?? '');
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

export class ContentsTransport implements ITransport {
  constructor(
    private _settings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {}

  plan(
    folder: string,
    files: { path: string; size: number }[]
  ): Promise<IUploadPlan> {
    return this._json<IUploadPlan>(this._api('transfer/plan'), {
      method: 'POST',
      body: JSON.stringify({ path: folder, files })
    });
  }

  async mkdir(path: string, signal: AbortSignal): Promise<void> {
    await this._json(this._contents(path), {
      method: 'PUT',
      body: JSON.stringify({ type: 'directory' }),
      signal
    });
  }

  async put(
    path: string,
    content: Blob,
    chunk: number | null,
    signal: AbortSignal
  ): Promise<number> {
    const model: Record<string, unknown> = {
      type: 'file',
      format: 'base64',
      content: await base64Of(content)
    };
    if (chunk !== null) {
      model.chunk = chunk;
    }
    const answer = await this._json<{ size?: number }>(this._contents(path), {
      method: 'PUT',
      body: JSON.stringify(model),
      signal
    });
    return answer.size ?? content.size;
  }

  async size(path: string, signal: AbortSignal): Promise<number | null> {
    try {
      const model = await this._json<{ size?: number }>(
        this._contents(path) + '?content=0&type=file',
        { method: 'GET', signal, cache: 'no-store' }
      );
      return model.size ?? null;
    } catch (error) {
      if (error instanceof TransferError && error.status === 404) {
        return null;
      }
      throw error;
    }
  }

  async remove(path: string): Promise<void> {
    await this._json(this._contents(path), { method: 'DELETE' });
  }

  extract(
    path: string,
    into: string | null,
    remove: boolean
  ): Promise<IExtracted> {
    return this._json<IExtracted>(this._api('transfer/extract'), {
      method: 'POST',
      body: JSON.stringify({ path, into, remove })
    });
  }

  private _api(endPoint: string): string {
    return URLExt.join(this._settings.baseUrl, 'cgu-lab', endPoint);
  }

  private _contents(path: string): string {
    return URLExt.join(
      this._settings.baseUrl,
      'api/contents',
      URLExt.encodeParts(path)
    );
  }

  private async _json<T>(url: string, init: RequestInit): Promise<T> {
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(url, init, this._settings);
    } catch (error) {
      if (init.signal?.aborted) {
        throw new CancelledError();
      }
      throw new TransferError(
        String((error as Error)?.message ?? error),
        0,
        'network',
        true
      );
    }
    let body: Record<string, unknown> = {};
    try {
      const text = await response.text();
      body = text ? JSON.parse(text) : {};
    } catch (error) {
      if (init.signal?.aborted) {
        throw new CancelledError();
      }
      if (response.ok) {
        throw new TransferError(
          String(error),
          response.status,
          'network',
          true
        );
      }
    }
    if (!response.ok) {
      const message = typeof body.message === 'string' ? body.message : '';
      const code = typeof body.code === 'string' ? body.code : '';
      // No readable message: left empty, the panel says it from the status.
      throw new TransferError(
        message,
        response.status,
        code,
        RETRYABLE.has(response.status),
        body
      );
    }
    return body as T;
  }
}
