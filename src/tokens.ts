/**
 * Public tokens and command ids of the lab extension, and who is looking
 * (the session) as the other plugins see it.
 */
import { Token } from '@lumino/coreutils';
import { ISignal } from '@lumino/signaling';
import { IResources } from './apiTypes';

/** Every command of the lab extension, in one table. */
export namespace CommandIDs {
  export const openPortal = 'cgu-lab:open-portal';
  export const share = 'cgu-lab:share';
  export const shareFile = 'cgu-lab:share-file';
  export const openResources = 'cgu-lab:open-resources';
  export const resize = 'cgu-lab:resize';
  export const openSharedWithMe = 'cgu-lab:open-shared-with-me';
  export const refreshSharedWithMe = 'cgu-lab:refresh-shared-with-me';
  export const showAccessNotice = 'cgu-lab:show-access-notice';
  export const keepRunning = 'cgu-lab:keep-running';
  export const saveTemplate = 'cgu-lab:save-template';
  export const submit = 'cgu-lab:submit';
  export const openCourse = 'cgu-lab:open-course';
  export const refreshCourse = 'cgu-lab:refresh-course';
  export const checkLiveView = 'cgu-lab:check-live-view';
  export const checkPlatform = 'cgu-lab:check-platform';
}

/** The translation domain of the lab extension's sentences. */
export const DOMAIN = 'cgu_lab';

/** The command palette category of every cgu-lab command. */
export const PALETTE_CATEGORY = 'cgu-lab';

/** How the current user may use this notebook server. */
export type Access = 'owner' | 'edit' | 'read';

/** What `GET cgu-lab/info` answers: who is looking at which notebook. */
export interface IServerInfo {
  version: string;
  user: { name: string; display_name: string };
  notebook: { owner: string; name: string } | null;
  access: Access;
  /**
   * The paths of a single-file share; an empty list (or a missing field, from
   * an older server) means the whole notebook.
   */
  scope?: string[];
  controller_url: string | null;
}

/**
 * Who is looking at this notebook server, known once the handshake answered.
 */
export interface ICguLabSession {
  /** The server's answer, or null when the server extension did not answer. */
  readonly info: IServerInfo | null;
  /** The user's access; null when unknown. */
  readonly access: Access | null;
  /** True when the user owns this notebook server (owner-only features). */
  readonly isOwner: boolean;
  /** Why `info` is null, as a sentence; null when the handshake worked. */
  readonly problem: string | null;
}

/** The cgu-lab session, provided by `cgu-lab:core`. */
export const ICguLabSession = new Token<ICguLabSession>(
  'cgu-lab:ICguLabSession',
  'Who is looking at this notebook server and with what access.'
);

/** Live resource figures of this notebook server. */
export interface IResourcesModel {
  /** The latest figures; null before the first answer. */
  readonly resources: IResources | null;
  /** The latest error as a sentence; null after a good answer. */
  readonly error: string | null;
  /** When the latest answer (good or bad) arrived. */
  readonly updatedAt: Date | null;
  /** Emitted after every refresh. */
  readonly changed: ISignal<IResourcesModel, void>;
  /** Fetch the figures now. */
  refresh(): Promise<void>;
}

/** The resources model, provided by `cgu-lab:resources`. */
export const IResourcesModel = new Token<IResourcesModel>(
  'cgu-lab:IResourcesModel',
  'Live CPU, memory and GPU figures of this notebook server.'
);
