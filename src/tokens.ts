/** Command ids and shared shapes of the cgu-lab lab extension. */

export namespace CommandIDs {
  export const openControlPanel = 'cgu-lab:open-control-panel';
}

/** What `GET cgu-lab/info` answers: who is looking at which notebook. */
export interface IServerInfo {
  version: string;
  user: { name: string; display_name: string };
  notebook: { owner: string; name: string } | null;
  access: 'owner' | 'edit' | 'read';
  controller_url: string | null;
}
