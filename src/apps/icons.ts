/** The launcher's icons of the apps. */
import { LabIcon } from '@jupyterlab/ui-components';

export const desktopIcon = new LabIcon({
  name: 'cgu-lab:desktop',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161"><path d="M3 4h18a1 1 0 0 1 1 1v11a1 1 0 0 1-1 1h-7v2h3v1H7v-1h3v-2H3a1 1 0 0 1-1-1V5a1 1 0 0 1 1-1zm1 2v9h16V6z"/><path d="M6 8h5v1H6zm0 2h3v1H6z"/></g></svg>'
});

export const codeIcon = new LabIcon({
  name: 'cgu-lab:vscode',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161"><path d="M17 2l5 2.5v15L17 22 7.5 13.5 3.5 16.5 2 15.5v-7L3.5 7.5l4 3L17 2zm0 5l-5.5 5 5.5 5z"/></g></svg>'
});

export const webAppIcon = new LabIcon({
  name: 'cgu-lab:web-app',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161"><path d="M4 4h16a2 2 0 0 1 2 2v12a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2zm0 4v10h16V8z"/></g></svg>'
});

/** An administrator's own SVG, or the kind's icon. */
export function iconFor(kind: string, name: string, svg: string): LabIcon {
  if (svg) {
    return new LabIcon({ name: `cgu-lab:app-${name}`, svgstr: svg });
  }
  return kind === 'desktop'
    ? desktopIcon
    : kind === 'vscode'
      ? codeIcon
      : webAppIcon;
}
