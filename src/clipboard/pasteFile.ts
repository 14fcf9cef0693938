/**
 * "Paste Image/File from Clipboard": what the laptop's clipboard holds (a
 * screenshot, an image copied from a web page, some text) becomes a file in
 * the notebook, without saving it on the laptop and uploading it.
 *
 * The browser gives images as PNG; text becomes a `.txt`. The file gets a
 * new name that says what and when (`pasted-image-20260312-141503.png`), so
 * nothing already there is ever overwritten, and goes through the contents
 * API like an upload, with the same checks on the server.
 */
import type { Contents } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import { permissionState } from './browser';
import { pastedKind, pastedName, toBase64, uniquePath } from './protocol';

/** Where the pasted file went. */
export interface IPasted {
  path: string;
  size: number;
  mime: string;
}

/** A sentence for the user: the command shows it as it is. */
export class PasteProblem extends Error {}

async function exists(
  contents: Contents.IManager,
  path: string
): Promise<boolean> {
  try {
    await contents.get(path, { content: false });
    return true;
  } catch (error) {
    const status = (error as { response?: Response }).response?.status;
    if (status === 404) {
      return false;
    }
    throw error;
  }
}

async function clipboardItems(
  trans: TranslationBundle
): Promise<ClipboardItems> {
  if (!navigator.clipboard?.read) {
    throw new PasteProblem(
      trans.__(
        'This browser cannot read images or files from the clipboard: use a recent Chrome, Edge, Firefox or Safari, on an HTTPS page.'
      )
    );
  }
  try {
    return await navigator.clipboard.read();
  } catch (error) {
    if ((await permissionState('clipboard-read')) === 'denied') {
      throw new PasteProblem(
        trans.__(
          'Your browser refused this page access to the clipboard. Allow "Clipboard" in the site settings (the icon left of the address) and try again.'
        )
      );
    }
    throw new PasteProblem(
      trans.__(
        'The clipboard could not be read: %1',
        (error as Error).message || String(error)
      )
    );
  }
}

/** Save the clipboard's image (or text) as a new file in `folder` of the home. */
export async function pasteIntoFolder(
  contents: Contents.IManager,
  folder: string,
  trans: TranslationBundle
): Promise<IPasted> {
  const items = await clipboardItems(trans);
  for (const item of items) {
    const kind = pastedKind(item.types);
    if (!kind) {
      continue;
    }
    const blob = await item.getType(kind.mime);
    const path = await uniquePath(folder, pastedName(kind, new Date()), p =>
      exists(contents, p)
    );
    const text = kind.mime.startsWith('text/');
    await contents.save(path, {
      type: 'file',
      format: text ? 'text' : 'base64',
      content: text
        ? await blob.text()
        : toBase64(new Uint8Array(await blob.arrayBuffer()))
    });
    return { path, size: blob.size, mime: kind.mime };
  }
  throw new PasteProblem(
    trans.__(
      'The clipboard holds no image and no text to save: copy something first.'
    )
  );
}
