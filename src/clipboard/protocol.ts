/**
 * The messages of the clipboard channel (cgu_lab/notebook/clipboard/handlers.py
 * describes them), the settings of the plugin, and the pure helpers of the
 * feature: base64, the names of pasted files.
 */

/** What a kernel asks of this tab's clipboard. */
export interface IClipboardRequest {
  type: 'request';
  id: number;
  op: 'read' | 'write' | 'types';
  /** text/plain, text/html or image/png. */
  mime: string;
  /** What to write, for text types. */
  text?: string;
  /** What to write, for images. */
  base64?: string;
  /** How long the kernel still waits, in milliseconds. */
  deadline_ms: number;
}

/** Why a request failed, as the server knows the codes. */
export type FailureCode =
  'refused' | 'unsupported' | 'not_available' | 'timeout' | 'too_large';

/** The page's answer. */
export type ClipboardAnswer =
  | {
      ok: true;
      text?: string;
      base64?: string;
      types?: string[];
      deferred?: boolean;
    }
  | { ok: false; code: FailureCode; message: string };

export type ServerMessage =
  | { type: 'ready'; max_bytes: number }
  | IClipboardRequest
  | { type: 'cancel'; id: number }
  | { type: 'error'; message: string };

/** When a kernel's read needs a click on "Allow" first. */
export type ConfirmReads = 'never' | 'not-owner' | 'always';

/** The plugin's settings (schema/clipboard.json). */
export interface IClipboardSettings {
  kernelBridge: boolean;
  confirmReads: ConfirmReads;
  announceReads: boolean;
}

export const DEFAULT_SETTINGS: IClipboardSettings = {
  kernelBridge: true,
  confirmReads: 'not-owner',
  announceReads: true
};

/** The settings from the registry's composite values, defaults for anything odd. */
export function settingsFrom(
  get: (key: string) => unknown
): IClipboardSettings {
  const confirm = get('confirmReads');
  return {
    kernelBridge: get('kernelBridge') !== false,
    confirmReads:
      confirm === 'never' || confirm === 'always' ? confirm : 'not-owner',
    announceReads: get('announceReads') !== false
  };
}

/** Whether a kernel's read must be allowed with a click, for this user. */
export function mustConfirm(policy: ConfirmReads, isOwner: boolean): boolean {
  return policy === 'always' || (policy === 'not-owner' && !isOwner);
}

export function failure(code: FailureCode, message: string): ClipboardAnswer {
  return { ok: false, code, message };
}

/** Bytes as base64, in chunks (a spread of a large array overflows the stack). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}

/** What a pasted clipboard item becomes: its type, and the file's extension. */
export interface IPastedKind {
  mime: string;
  extension: string;
  /** The start of the file's name. */
  stem: string;
}

/**
 * The one type of a clipboard item worth a file: an image (the browser gives
 * images as PNG) before HTML before text; null when none of them is there.
 */
export function pastedKind(types: ReadonlyArray<string>): IPastedKind | null {
  const image = types.find(t => t.startsWith('image/'));
  if (image) {
    const extension = image === 'image/png' ? 'png' : image.slice(6) || 'img';
    return { mime: image, extension, stem: 'pasted-image' };
  }
  if (types.includes('text/plain')) {
    return { mime: 'text/plain', extension: 'txt', stem: 'pasted-text' };
  }
  if (types.includes('text/html')) {
    return { mime: 'text/html', extension: 'html', stem: 'pasted-text' };
  }
  return null;
}

/** `pasted-image-20260312-141503.png`: sorted by when, readable, no spaces. */
export function pastedName(kind: IPastedKind, when: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const date = `${when.getFullYear()}${pad(when.getMonth() + 1)}${pad(when.getDate())}`;
  const time = `${pad(when.getHours())}${pad(when.getMinutes())}${pad(when.getSeconds())}`;
  return `${kind.stem}-${date}-${time}.${kind.extension}`;
}

/** `name` in `folder`, else `name-1`, `name-2`... before the extension. */
export async function uniquePath(
  folder: string,
  name: string,
  exists: (path: string) => Promise<boolean>
): Promise<string> {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const extension = dot > 0 ? name.slice(dot) : '';
  const join = (file: string) => (folder ? `${folder}/${file}` : file);
  for (let index = 0; index < 1000; index++) {
    const candidate = join(index === 0 ? name : `${stem}-${index}${extension}`);
    if (!(await exists(candidate))) {
      return candidate;
    }
  }
  throw new Error(`no free name for ${name} in ${folder || 'the home'}`);
}
