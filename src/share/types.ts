/**
 * What the Share dialog is opened with, and the endpoints it calls.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { IDirectory, IShare, IShareRequest, ShareAccess } from '../apiTypes';

/** How the dialog was opened. */
export type ShareMode =
  /** From a notebook: the user chooses the whole server or only the file. */
  | 'choose'
  /** From the file browser: only the file. */
  | 'file'
  /** From the palette with no document open: the whole notebook server. */
  | 'notebook';

/** What the Share dialog needs. */
export interface IShareDialogOptions {
  mode: ShareMode;
  /** The file's path (contents path, no drive), for 'choose' and 'file'. */
  filePath: string | null;
  /** The notebook server's name, for the title. */
  notebookName: string | null;
  /** The user's own name, left out of the suggestions. */
  selfName: string | null;
  defaultAccess: ShareAccess;
  /** An id of `expiryChoices`. */
  defaultExpiry: string;
  /** The page's origin, to make share links absolute. */
  origin: string;
  /** The endpoints; replaceable in tests. */
  api?: IShareAPI;
  trans: TranslationBundle;
}

/** The endpoints the Share dialog calls. */
export interface IShareAPI {
  shares(): Promise<IShare[]>;
  createShare(body: IShareRequest): Promise<IShare>;
  deleteShare(id: number): Promise<{ message: string }>;
  directory(query: string): Promise<IDirectory>;
}
