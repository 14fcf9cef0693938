/**
 * The file manager's actions end to end, as the commands and the drop handler
 * run them: upload a tree (plan, ask about files that exist, send with the
 * progress panel, refresh the file browser), upload an archive and extract
 * it, extract an archive of the home, download paths as one zip. Every
 * refusal is shown with the server's own sentence (the limit and the use for
 * the disk allowance).
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { statusSentence } from '../api';
import { formatBytes } from '../format';
import { allowanceText, archiveStem, joinPath, zipUrl } from './format';
import { TransferPanel } from './panel';
import { IPicked } from './pick';
import { ContentsTransport, IExtracted } from './transport';
import { TransferError, Upload, IUploadProgress } from './upload';

export interface ITransferContext {
  trans: TranslationBundle;
  transport: ContentsTransport;
  baseUrl: string;
  chunkSize: number;
  parallel: number;
  /** Show the folder's new contents (the file browser's refresh). */
  refresh: () => Promise<void>;
}

/** The sentence for a failure: the server's, else one from the status. */
export function failureText(error: unknown, trans: TranslationBundle): string {
  if (error instanceof TransferError) {
    if (error.message) {
      return error.message;
    }
    if (error.status === 0) {
      return trans.__('The connection to the notebook was lost; try again.');
    }
    return statusSentence(error.status, trans);
  }
  return String((error as Error)?.message ?? error);
}

/** Files that exist already: replace them, keep them, or stop. */
async function askAboutConflicts(
  trans: TranslationBundle,
  conflicts: string[]
): Promise<'replace' | 'keep' | 'stop'> {
  const shown = conflicts.slice(0, 5).join(', ');
  const more =
    conflicts.length > 5 ? trans.__(' and %1 more', conflicts.length - 5) : '';
  const result = await showDialog({
    title: trans._n(
      '%1 file exists already',
      '%1 files exist already',
      conflicts.length
    ),
    body: `${shown}${more}`,
    buttons: [
      Dialog.cancelButton({ label: trans.__('Stop') }),
      Dialog.okButton({ label: trans.__('Keep Existing') }),
      Dialog.warnButton({ label: trans.__('Replace') })
    ]
  });
  if (!result.button.accept) {
    return 'stop';
  }
  return result.button.displayType === 'warn' ? 'replace' : 'keep';
}

/**
 * Upload picked files into `folder`, showing progress in `panel`; resolves
 * with the outcome (null: refused or stopped before sending). The panel is
 * finished here unless `keepOpen` (the caller has more to do on success).
 */
export async function uploadInto(
  ctx: ITransferContext,
  panel: TransferPanel,
  folder: string,
  picked: IPicked,
  keepOpen = false
): Promise<IUploadProgress | null> {
  const { trans } = ctx;
  const upload = new Upload(
    ctx.transport,
    folder,
    picked.files,
    {
      chunkSize: ctx.chunkSize,
      parallel: ctx.parallel,
      onProgress: progress => panel.showProgress(progress)
    },
    picked.emptyFolders
  );
  panel.onCancel = () => upload.cancel();
  panel.showStatus(trans.__('Checking the names and your disk allowance…'));
  let skipped = 0;
  if (picked.files.length) {
    const planned = await planUpload(trans, panel, upload);
    if (planned === null) {
      return null;
    }
    skipped = planned;
  }
  const result = await upload.run();
  await ctx.refresh();
  reportUpload(trans, panel, folder, result, skipped, keepOpen);
  return result;
}

/**
 * Check the names and the disk allowance and settle files that exist;
 * resolves with how many hidden files were left out, or null when the user
 * stopped or the server refused (the panel is finished then).
 */
async function planUpload(
  trans: TranslationBundle,
  panel: TransferPanel,
  upload: Upload
): Promise<number | null> {
  try {
    const plan = await upload.plan();
    upload.exclude(plan.skipped.map(s => s.path));
    if (plan.conflicts.length) {
      const choice = await askAboutConflicts(trans, plan.conflicts);
      if (choice === 'stop') {
        panel.finish(trans.__('Nothing was uploaded.'), true);
        return null;
      }
      if (choice === 'keep') {
        upload.exclude(plan.conflicts);
      }
    }
    panel.showStatus(allowanceText(trans, plan.used, plan.allowance), false);
    return plan.skipped.length;
  } catch (error) {
    panel.finish(failureText(error, trans), false);
    return null;
  }
}

/** Finish the panel with the sentence for an upload's outcome. */
function reportUpload(
  trans: TranslationBundle,
  panel: TransferPanel,
  folder: string,
  result: IUploadProgress,
  skipped: number,
  keepOpen: boolean
): void {
  if (result.state === 'done') {
    if (!keepOpen) {
      panel.finish(uploadedText(trans, folder, result, skipped), true);
    }
  } else if (result.state === 'cancelled') {
    panel.finish(
      trans._n(
        'Cancelled: %1 file was uploaded; the ones half-sent were removed.',
        'Cancelled: %1 files were uploaded; the ones half-sent were removed.',
        result.done
      ),
      false
    );
  } else {
    const failed = result.files.filter(f => f.state === 'failed').length;
    panel.finish(
      result.error
        ? failureText(result.error, trans)
        : trans._n(
            '%1 file could not be uploaded.',
            '%1 files could not be uploaded.',
            failed
          ),
      false
    );
  }
}

/** The sentence for a finished upload, with the hidden files left out. */
function uploadedText(
  trans: TranslationBundle,
  folder: string,
  result: IUploadProgress,
  skipped: number
): string {
  const where = folder || trans.__('the home folder');
  const leftOut = skipped
    ? ' ' +
      trans._n(
        '(%1 hidden file left out)',
        '(%1 hidden files left out)',
        skipped
      )
    : '';
  return (
    trans._n(
      'Uploaded %1 file (%2) to %3.',
      'Uploaded %1 files (%2) to %3.',
      result.done,
      formatBytes(result.total),
      where
    ) + leftOut
  );
}

/** Open a panel and upload a tree into `folder`. */
export async function uploadTree(
  ctx: ITransferContext,
  folder: string,
  picked: IPicked
): Promise<IUploadProgress | null> {
  if (!picked.files.length && !picked.emptyFolders.length) {
    return null;
  }
  const panel = new TransferPanel(
    ctx.trans,
    folder
      ? ctx.trans.__('Uploading to %1', folder)
      : ctx.trans.__('Uploading to the home folder')
  );
  panel.open();
  return uploadInto(ctx, panel, folder, picked);
}

/**
 * Extract the archive at `path` (relative to the home) into its folder; when
 * its entries exist there already, offer a new folder named after it.
 * `remove` deletes the archive afterwards (it was uploaded only to be
 * extracted), and also when extracting is refused.
 */
export async function extractArchive(
  ctx: ITransferContext,
  path: string,
  remove: boolean,
  panel?: TransferPanel
): Promise<boolean> {
  const { trans } = ctx;
  const name = path.split('/').pop() ?? path;
  panel = showExtracting(trans, name, panel);
  let into: string | null = null;
  for (;;) {
    try {
      const result = await ctx.transport.extract(path, into, remove);
      await ctx.refresh();
      panel.finish(extractedText(trans, result), true);
      return true;
    } catch (error) {
      if (into === null) {
        const folder = await askNewFolder(trans, error, name);
        if (folder !== null) {
          into = folder;
          continue;
        }
      }
      if (remove) {
        await ctx.transport.remove(path).catch(() => undefined);
        await ctx.refresh();
      }
      panel.finish(failureText(error, trans), false);
      return false;
    }
  }
}

/** Title the panel (a new one unless given) for extracting `name`. */
function showExtracting(
  trans: TranslationBundle,
  name: string,
  panel?: TransferPanel
): TransferPanel {
  if (!panel) {
    panel = new TransferPanel(trans, trans.__('Extracting %1', name));
    panel.open();
  }
  panel.setTitle(trans.__('Extracting %1', name));
  panel.onCancel = () => undefined; // an extraction is all or nothing: it ends by itself
  panel.showStatus(trans.__('Extracting %1…', name));
  return panel;
}

/** The sentence for a finished extraction. */
function extractedText(trans: TranslationBundle, result: IExtracted): string {
  return trans._n(
    'Extracted %1 file (%2) into %3.',
    'Extracted %1 files (%2) into %3.',
    result.files,
    formatBytes(result.bytes),
    joinPath(result.folder, result.into ?? '') || '~'
  );
}

/**
 * When extracting failed because entries exist, offer the server's new
 * folder; resolves with it when accepted, else null.
 */
async function askNewFolder(
  trans: TranslationBundle,
  error: unknown,
  name: string
): Promise<string | null> {
  const suggestion =
    error instanceof TransferError && error.code === 'conflict'
      ? String(error.details.suggestion ?? archiveStem(name))
      : null;
  if (!suggestion) {
    return null;
  }
  const answer = await showDialog({
    title: trans.__('Extract into a new folder?'),
    body: trans.__(
      '%1 Extract into the new folder “%2” instead?',
      failureText(error, trans),
      suggestion
    ),
    buttons: [
      Dialog.cancelButton(),
      Dialog.okButton({ label: trans.__('Extract') })
    ]
  });
  return answer.button.accept ? suggestion : null;
}

/** Upload an archive into `folder`, then extract it there and delete it. */
export async function uploadAndExtract(
  ctx: ITransferContext,
  folder: string,
  archive: File
): Promise<boolean> {
  const panel = new TransferPanel(
    ctx.trans,
    ctx.trans.__('Uploading %1', archive.name)
  );
  panel.open();
  const picked = {
    files: [{ path: archive.name, file: archive }],
    emptyFolders: []
  };
  const result = await uploadInto(ctx, panel, folder, picked, true);
  if (result?.state !== 'done' || result.done !== 1) {
    return false;
  }
  return extractArchive(ctx, joinPath(folder, archive.name), true, panel);
}

/** Download paths of the home as one zip, through the browser's own downloads. */
export function downloadZip(
  ctx: ITransferContext,
  paths: ReadonlyArray<string>
): void {
  if (!paths.length) {
    Notification.warning(ctx.trans.__('Select a folder or some files first.'), {
      autoClose: 5000
    });
    return;
  }
  const link = document.createElement('a');
  link.href = zipUrl(ctx.baseUrl, paths);
  link.download = '';
  link.rel = 'noopener';
  link.hidden = true;
  document.body.appendChild(link);
  link.click();
  link.remove();
}
