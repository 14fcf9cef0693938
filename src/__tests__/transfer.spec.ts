/**
 * The file manager's upload rules against a stand-in server that keeps files
 * in memory and drops connections on cue: the tree's folders first, chunks in
 * JupyterLab's numbering, resuming from the chunks held (whether or not the
 * dropped chunk landed), Cancel deleting what was half-sent, and refusals
 * that stop everything.
 */
import {
  archiveStem,
  chunkCount,
  chunkNumber,
  chunksHeld,
  foldersOf,
  isArchive,
  joinPath,
  progressText,
  zipUrl
} from '../transfer/format';
import {
  CancelledError,
  ITransport,
  IUploadPlan,
  TransferError,
  Upload
} from '../transfer/upload';
import { trans } from './trans';

const dropped = () => new TransferError('', 0, 'network', true);

/** A server in memory; `drop(n, landed)` fails the n-th put, after or before writing. */
class StandIn implements ITransport {
  files = new Map<string, Uint8Array>();
  folders: string[] = [];
  chunks: number[] = [];
  removed: string[] = [];
  private _puts = 0;
  private _drops = new Map<number, boolean>();
  onPut: (() => void) | null = null;

  drop(nth: number, landed: boolean): void {
    this._drops.set(nth, landed);
  }

  async plan(): Promise<IUploadPlan> {
    return {
      files: 0,
      needed: 0,
      conflicts: [],
      skipped: [],
      allowance: null,
      used: null,
      left: null,
      free: 1e12
    };
  }

  async mkdir(path: string): Promise<void> {
    this.folders.push(path);
  }

  async put(
    path: string,
    content: Blob,
    chunk: number | null,
    signal: AbortSignal
  ): Promise<number> {
    const bytes = new Uint8Array(await content.arrayBuffer());
    if (signal.aborted) {
      throw new CancelledError();
    }
    this._puts += 1;
    this.onPut?.();
    const drop = this._drops.get(this._puts);
    if (drop === false) {
      throw dropped();
    }
    if (chunk !== null) {
      this.chunks.push(chunk);
    }
    const before =
      chunk === null || chunk === 1
        ? new Uint8Array()
        : (this.files.get(path) ?? new Uint8Array());
    const after = new Uint8Array(before.length + bytes.length);
    after.set(before);
    after.set(bytes, before.length);
    this.files.set(path, after);
    if (drop === true) {
      throw dropped(); // written, but the answer was lost
    }
    return after.length;
  }

  async size(path: string): Promise<number | null> {
    return this.files.get(path)?.length ?? null;
  }

  async remove(path: string): Promise<void> {
    this.removed.push(path);
    this.files.delete(path);
  }
}

const noWait = async (): Promise<void> => undefined;

function bytes(n: number, seed = 1): Uint8Array<ArrayBuffer> {
  return Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) % 251);
}

function blob(data: Uint8Array): Blob {
  return new Blob([data as Uint8Array<ArrayBuffer>]);
}

describe('transfer format', () => {
  it('lists the folders of a tree, parents first', () => {
    expect(foldersOf(['a/b/c.txt', 'a/d.txt', 'e.txt'], ['x/empty'])).toEqual([
      'a',
      'x',
      'a/b',
      'x/empty'
    ]);
  });

  it('numbers chunks as the contents API does', () => {
    expect(chunkCount(0, 4)).toBe(1);
    expect(chunkCount(9, 4)).toBe(3);
    expect([0, 1, 2].map(i => chunkNumber(i, 3))).toEqual([1, 2, -1]);
  });

  it('resumes from the chunks the server holds', () => {
    expect(chunksHeld(8, 2, 10, 4)).toBe(2); // chunk 3 did not land: send it again
    expect(chunksHeld(10, 2, 10, 4)).toBe(3); // it landed (the last one): done
    expect(chunksHeld(12, 2, 20, 4)).toBe(3);
    expect(chunksHeld(5, 2, 20, 4)).toBe(0); // no boundary: start over
    expect(chunksHeld(null, 2, 20, 4)).toBe(0);
    expect(chunksHeld(4, 0, 20, 4)).toBe(0); // chunk 1 always rewrites
  });

  it('knows archives, paths and links', () => {
    expect(isArchive('Lab.TAR.GZ')).toBe(true);
    expect(isArchive('notes.txt')).toBe(false);
    expect(archiveStem('lab.tar.gz')).toBe('lab');
    expect(joinPath('', 'a/', '/b')).toBe('a/b');
    expect(zipUrl('/notebook/u/n', ['a b', 'c/d'])).toBe(
      '/notebook/u/n/cgu-lab/transfer/zip?path=a%20b&path=c%2Fd'
    );
    expect(progressText(trans, 1024, 2048, 1, 2)).toBe(
      '1.0 KiB of 2.0 KiB · 1 of 2 files'
    );
  });
});

describe('Upload', () => {
  it('sends a tree with its folders and chunks, with progress', async () => {
    const server = new StandIn();
    const big = bytes(10, 7);
    const seen: number[] = [];
    const upload = new Upload(
      server,
      'dest',
      [
        { path: 'tree/a/small.txt', file: blob(bytes(3)) },
        { path: 'tree/big.bin', file: blob(big) }
      ],
      {
        chunkSize: 4,
        parallel: 1,
        sleep: noWait,
        onProgress: p => seen.push(p.sent)
      },
      ['tree/empty']
    );
    const result = await upload.run();
    expect(result.state).toBe('done');
    expect(server.folders).toEqual([
      'dest/tree',
      'dest/tree/a',
      'dest/tree/empty'
    ]);
    expect(server.files.get('dest/tree/big.bin')).toEqual(big);
    expect(server.chunks).toEqual([1, 2, -1]);
    expect(result.sent).toBe(13);
    expect(Math.max(...seen)).toBe(13);
    expect(seen[0]).toBe(0); // the totals before the first byte
  });

  it.each([
    ['did not land', false],
    ['landed but its answer was lost', true]
  ])('resumes a chunked file when a chunk %s', async (_, landed) => {
    const server = new StandIn();
    server.drop(2, landed); // the second chunk's connection drops
    const data = bytes(13, 3);
    const upload = new Upload(
      server,
      '',
      [{ path: 'big.bin', file: blob(data) }],
      {
        chunkSize: 4,
        sleep: noWait
      }
    );
    const result = await upload.run();
    expect(result.state).toBe('done');
    expect(result.resumed).toBe(1);
    expect(server.files.get('big.bin')).toEqual(data);
    // Resumed from the chunk after those held, never from the start.
    expect(server.chunks.filter(c => c === 1)).toHaveLength(1);
  });

  it('gives up after its retries, and says so', async () => {
    const server = new StandIn();
    for (let n = 1; n <= 10; n++) {
      server.drop(n, false);
    }
    const upload = new Upload(
      server,
      '',
      [{ path: 'a.txt', file: blob(bytes(3)) }],
      {
        backoff: [1, 1],
        sleep: noWait
      }
    );
    const result = await upload.run();
    expect(result.state).toBe('failed');
    expect(result.files[0].state).toBe('failed');
  });

  it('stops everything on a refusal that every file would get', async () => {
    const server = new StandIn();
    server.put = async () => {
      throw new TransferError('read-only', 403, 'read_only');
    };
    const files = [1, 2, 3].map(n => ({ path: `f${n}`, file: blob(bytes(2)) }));
    const result = await new Upload(server, '', files, {
      parallel: 1,
      sleep: noWait
    }).run();
    expect(result.state).toBe('failed');
    expect(result.error?.code).toBe('read_only');
    expect(result.files.filter(f => f.state === 'waiting')).toHaveLength(2);
  });

  it('cancels: stops sending and deletes the file half-sent', async () => {
    const server = new StandIn();
    const data = bytes(40, 5);
    const upload = new Upload(
      server,
      'up',
      [
        { path: 'done.txt', file: blob(bytes(2)) },
        { path: 'half.bin', file: blob(data) }
      ],
      { chunkSize: 4, parallel: 1, sleep: noWait }
    );
    let puts = 0;
    server.onPut = () => {
      if (++puts === 4) {
        upload.cancel(); // during the third chunk of half.bin
      }
    };
    const result = await upload.run();
    expect(result.state).toBe('cancelled');
    expect(server.files.has('up/done.txt')).toBe(true);
    expect(server.files.has('up/half.bin')).toBe(false);
    expect(server.removed).toEqual(['up/half.bin']);
    expect(result.done).toBe(1);
  });

  it('leaves out what the plan skipped or the user keeps', async () => {
    const server = new StandIn();
    const upload = new Upload(
      server,
      '',
      ['a', '.git/config', 'b'].map(path => ({ path, file: blob(bytes(1)) })),
      { sleep: noWait }
    );
    upload.exclude(['.git/config']);
    const result = await upload.run();
    expect(result.files.map(f => f.path)).toEqual(['a', 'b']);
    expect([...server.files.keys()].sort()).toEqual(['a', 'b']);
    expect(server.folders).toEqual([]);
  });
});
