/** The launcher's icons of the apps. */
import { LabIcon } from '@jupyterlab/ui-components';
import { iconShape } from './protocol';

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

/** The notebook's database (PostgreSQL or MariaDB): a stack of three disks, drawn here. */
export const databaseIcon = new LabIcon({
  name: 'cgu-lab:database',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161"><path d="M12 2c4.4 0 8 1.3 8 3v14c0 1.7-3.6 3-8 3s-8-1.3-8-3V5c0-1.7 3.6-3 8-3zm0 2C8.1 4 6 5 6 5s2.1 1 6 1 6-1 6-1-2.1-1-6-1zM6 7.6V11c0 .5 2.4 1.5 6 1.5s6-1 6-1.5V7.6C16.5 8.2 14.4 8.5 12 8.5S7.5 8.2 6 7.6zm0 6V17c0 .5 2.4 1.5 6 1.5s6-1 6-1.5v-3.4c-1.5.6-3.6.9-6 .9s-4.5-.3-6-.9z"/></g></svg>'
});

const SHAPES = {
  desktop: desktopIcon,
  code: codeIcon,
  database: databaseIcon,
  web: webAppIcon
};

/** An administrator's own SVG, or the kind's icon. */
export function iconFor(kind: string, name: string, svg: string): LabIcon {
  if (svg) {
    return new LabIcon({ name: `cgu-lab:app-${name}`, svgstr: svg });
  }
  return SHAPES[iconShape(kind)];
}
