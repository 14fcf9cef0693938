/**
 * An upload of many files (a folder tree, an archive) into a folder of the
 * home, over JupyterLab's own contents protocol: small files in one PUT,
 * larger ones in numbered base64 chunks (1 writes, 2..n-1 append, -1 ends).
 *
 * What JupyterLab's own uploader (`FileBrowserModel.upload`) does not do, and
 * this adds:
 *
 * - a plan first (`transport.plan`): the server checks the names, the folders
 *   on the way and the disk allowance before a byte is sent;
 * - the folders of the tree, created parents first;
 * - per-file and total progress, and Cancel, which stops the requests in
 *   flight and deletes the files left half-sent;
 * - resuming: a dropped connection (or a proxy's 502/503/504) is retried
 *   with back-off, and a chunked file goes on from the chunks the server
 *   holds (it reports the file's size) instead of starting over.
 *
 * No page or server code here: the transport is given, so the rules are
 * unit-tested against a stand-in that drops connections.
 */
import {
  chunkCount,
  chunkNumber,
  chunksHeld,
  foldersOf,
  joinPath
} from './format';

/** One file of an upload: its path below the destination folder. */
export interface IUploadFile {
  path: string;
  file: Blob;
}

/** What the server answers to an upload plan (`POST cgu-lab/transfer/plan`). */
export interface IUploadPlan {
  files: number;
  needed: number;
  conflicts: string[];
  skipped: { path: string; reason: string }[];
  allowance: number | null;
  used: number | null;
  left: number | null;
  free: number;
}

/** A refusal or a failure, with what the server said. */
export class TransferError extends Error {
  constructor(
    message: string,
    readonly status: number = 0,
    readonly code: string = '',
    readonly retryable: boolean = false,
    readonly details: Record<string, unknown> = {}
  ) {
    super(message);
  }
}

/** Thrown by a transport whose request was cancelled. */
export class CancelledError extends Error {}

/** How the upload reaches the server; paths are relative to the home. */
export interface ITransport {
  plan(
    folder: string,
    files: { path: string; size: number }[]
  ): Promise<IUploadPlan>;
  mkdir(path: string, signal: AbortSignal): Promise<void>;
  /** Send one chunk (`chunk` null: the whole file); resolves to the size held. */
  put(
    path: string,
    content: Blob,
    chunk: number | null,
    signal: AbortSignal
  ): Promise<number>;
  /** The size of the file held, or null when there is none. */
  size(path: string, signal: AbortSignal): Promise<number | null>;
  remove(path: string): Promise<void>;
}

export type FileState =
  'waiting' | 'sending' | 'retrying' | 'done' | 'failed' | 'cancelled';

export interface IFileProgress {
  path: string;
  size: number;
  sent: number;
  state: FileState;
  error?: string;
}

export interface IUploadProgress {
  state: 'running' | 'done' | 'failed' | 'cancelled';
  files: IFileProgress[];
  total: number;
  sent: number;
  done: number;
  /** The failure that stopped everything, when one did. */
  error?: TransferError;
  /** Resumptions after a dropped connection, all files together. */
  resumed: number;
}

export interface IUploadOptions {
  chunkSize?: number;
  /** Files sent at once. */
  parallel?: number;
  /** Waits before each retry of one request, in ms; their count is the tries. */
  backoff?: ReadonlyArray<number>;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  onProgress?: (progress: IUploadProgress) => void;
}

export const DEFAULT_CHUNK = 4 * 1024 * 1024;
export const DEFAULT_BACKOFF = [500, 1000, 2000, 4000, 8000, 15000];

/** Statuses that stop the whole upload: the same answer would come for every file. */
const FATAL = new Set([401, 403, 413, 507]);

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new CancelledError());
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(new CancelledError());
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

export class Upload {
  constructor(
    private _transport: ITransport,
    readonly folder: string,
    files: ReadonlyArray<IUploadFile>,
    options: IUploadOptions = {},
    private _emptyFolders: ReadonlyArray<string> = []
  ) {
    this._files = [...files];
    this._chunk = options.chunkSize ?? DEFAULT_CHUNK;
    this._parallel = Math.max(1, options.parallel ?? 3);
    this._backoff = options.backoff ?? DEFAULT_BACKOFF;
    this._sleep = options.sleep ?? abortableSleep;
    this._onProgress = options.onProgress ?? null;
    this.progress = {
      state: 'running',
      files: this._files.map(f => ({
        path: f.path,
        size: f.file.size,
        sent: 0,
        state: 'waiting'
      })),
      total: this._files.reduce((sum, f) => sum + f.file.size, 0),
      sent: 0,
      done: 0,
      resumed: 0
    };
  }

  readonly progress: IUploadProgress;

  /** Ask the server whether this upload may start (names, folders, allowance). */
  plan(): Promise<IUploadPlan> {
    return this._transport.plan(
      this.folder,
      this._files.map(f => ({ path: f.path, size: f.file.size }))
    );
  }

  /** Leave out files (those the plan skipped, or existing ones the user keeps). */
  exclude(paths: ReadonlyArray<string>): void {
    const out = new Set(paths);
    const keep = this._files.map(f => !out.has(f.path));
    this._files = this._files.filter((_, i) => keep[i]);
    this.progress.files = this.progress.files.filter((_, i) => keep[i]);
    this.progress.total = this._files.reduce((s, f) => s + f.file.size, 0);
  }

  /** Send everything; resolves with the final progress, never rejects. */
  async run(): Promise<IUploadProgress> {
    const signal = this._abort.signal;
    // The totals show at once ("0 B of 1 GiB · 0 of 1 files"), not after the first
    // chunk, which for a large file on a busy machine may take a while.
    this._emit();
    try {
      const paths = this._files.map(f => f.path);
      for (const folder of foldersOf(paths, this._emptyFolders)) {
        await this._retrying(() =>
          this._transport.mkdir(joinPath(this.folder, folder), signal)
        );
      }
      let next = 0;
      const worker = async () => {
        while (next < this._files.length && !signal.aborted && !this._fatal) {
          const index = next++;
          await this._sendFile(index, signal);
        }
      };
      await Promise.all(
        Array.from(
          { length: Math.min(this._parallel, this._files.length) },
          worker
        )
      );
      if (signal.aborted) {
        throw new CancelledError();
      }
      if (this._fatal) {
        throw this._fatal;
      }
      const failed = this.progress.files.some(f => f.state === 'failed');
      this.progress.state = failed ? 'failed' : 'done';
    } catch (error) {
      if (error instanceof CancelledError || signal.aborted) {
        this.progress.state = 'cancelled';
        await this._cleanUp();
      } else {
        this.progress.state = 'failed';
        this.progress.error =
          error instanceof TransferError
            ? error
            : new TransferError(String((error as Error)?.message ?? error));
      }
    }
    this._emit();
    return this.progress;
  }

  /** Stop now: requests in flight are aborted, half-sent files deleted. */
  cancel(): void {
    this._abort.abort();
  }

  private async _sendFile(index: number, signal: AbortSignal): Promise<void> {
    const { file } = this._files[index];
    const progress = this.progress.files[index];
    const path = joinPath(this.folder, this._files[index].path);
    progress.state = 'sending';
    this._emit();
    try {
      if (file.size <= this._chunk) {
        await this._retrying(
          () => this._transport.put(path, file, null, signal),
          progress
        );
        this._advance(progress, file.size);
      } else {
        await this._sendChunks(path, file, progress, signal);
      }
      progress.state = 'done';
      this.progress.done += 1;
    } catch (error) {
      if (error instanceof CancelledError || signal.aborted) {
        progress.state = 'cancelled';
        throw new CancelledError();
      }
      progress.state = 'failed';
      progress.error = (error as Error).message;
      if (error instanceof TransferError && FATAL.has(error.status)) {
        this._fatal = error;
      }
    }
    this._emit();
  }

  private async _sendChunks(
    path: string,
    file: Blob,
    progress: IFileProgress,
    signal: AbortSignal
  ): Promise<void> {
    const count = chunkCount(file.size, this._chunk);
    let held = 0; // chunks the server holds
    let tries = 0;
    while (held < count) {
      const start = held * this._chunk;
      const content = file.slice(
        start,
        Math.min(start + this._chunk, file.size)
      );
      try {
        await this._transport.put(
          path,
          content,
          chunkNumber(held, count),
          signal
        );
        held += 1;
        tries = 0;
        progress.state = 'sending';
        this._advance(progress, Math.min(held * this._chunk, file.size));
        continue;
      } catch (error) {
        if (!this._canRetry(error, tries, signal)) {
          throw error;
        }
        progress.state = 'retrying';
        this._emit();
        await this._sleep(this._backoff[tries++], signal);
      }
      // The connection dropped: the failed chunk may have landed. Ask.
      const size = await this._retrying(
        () => this._transport.size(path, signal),
        progress
      );
      held = chunksHeld(size, held, file.size, this._chunk);
      this.progress.resumed += 1;
      this._advance(progress, Math.min(held * this._chunk, file.size));
    }
  }

  /** Run a request again after a dropped connection, with back-off. */
  private async _retrying<T>(
    request: () => Promise<T>,
    progress?: IFileProgress
  ): Promise<T> {
    const signal = this._abort.signal;
    for (let tries = 0; ; tries++) {
      try {
        return await request();
      } catch (error) {
        if (!this._canRetry(error, tries, signal)) {
          throw error;
        }
        if (progress) {
          progress.state = 'retrying';
          this._emit();
        }
        this.progress.resumed += progress ? 1 : 0;
        await this._sleep(this._backoff[tries], signal);
      }
    }
  }

  private _canRetry(
    error: unknown,
    tries: number,
    signal: AbortSignal
  ): boolean {
    if (signal.aborted || error instanceof CancelledError) {
      throw new CancelledError();
    }
    return (
      error instanceof TransferError &&
      error.retryable &&
      tries < this._backoff.length
    );
  }

  /** Set a file's bytes held, and the total with it. */
  private _advance(progress: IFileProgress, sent: number): void {
    this.progress.sent += sent - progress.sent;
    progress.sent = sent;
    this._emit();
  }

  /** After Cancel: delete what was left half-sent (a finished file stays). */
  private async _cleanUp(): Promise<void> {
    const partial = this.progress.files.filter(
      f =>
        f.state === 'cancelled' ||
        f.state === 'retrying' ||
        f.state === 'sending'
    );
    for (const file of partial) {
      file.state = 'cancelled';
      try {
        await this._transport.remove(joinPath(this.folder, file.path));
      } catch {
        // nothing was written for it, or it is gone already
      }
    }
  }

  private _emit(): void {
    this._onProgress?.(this.progress);
  }

  private _files: IUploadFile[];
  private _chunk: number;
  private _parallel: number;
  private _backoff: ReadonlyArray<number>;
  private _sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private _onProgress: ((progress: IUploadProgress) => void) | null;
  private _abort = new AbortController();
  private _fatal: TransferError | null = null;
}
