/**
 * Read-only and shared mode: what a user who is not the owner sees (a
 * persistent notice and a status-bar label), and keeping notebooks of a
 * read-only share from trying to start kernels the server would refuse.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';
import { h } from './dom';
import {
  accessStatusLabel,
  fullNotice,
  readOnlyKernelPreference
} from './format';
import { IServerInfo } from './tokens';

/**
 * Tell a session context never to start a kernel on its own: no automatic
 * start, no default kernel, and no start at all. Other preferences (the
 * kernel name, reuse of a running session) are kept.
 */
export function preventKernelStart(sessionContext: ISessionContext): void {
  const preference = readOnlyKernelPreference(sessionContext.kernelPreference);
  if (preference !== sessionContext.kernelPreference) {
    sessionContext.kernelPreference = preference;
  }
}

/** The status-bar label: "Read-only" or "Shared: can edit". */
export class AccessStatus extends Widget {
  constructor(info: IServerInfo, onClick: () => void) {
    super();
    this.addClass('cgu-AccessStatus');
    const label = accessStatusLabel(info.access) ?? '';
    this.node.appendChild(
      h(
        'button',
        {
          type: 'button',
          class: `cgu-AccessStatus-button cgu-AccessStatus-${info.access}`,
          'data-cgu': 'access-status',
          'data-access': info.access,
          title: fullNotice(info) ?? '',
          onclick: onClick
        },
        label
      )
    );
  }
}
