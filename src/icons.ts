/** The extension's own icons. */
import { LabIcon } from '@jupyterlab/ui-components';

/** A gauge, for the Resources panel. */
export const gaugeIcon = new LabIcon({
  name: 'cgu-lab:gauge',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M12 4a10 10 0 0 0-8.66 15h17.32A10 10 0 0 0 12 4zm0 2a8 8 0 0 1 7.43 11H4.57A8 8 0 0 1 12 6zm4.24 2.35-4.95 4.24a1.5 1.5 0 1 0 1.42 1.42l4.24-4.95z"/>' +
    '</svg>'
});

/** Two people and an arrow, for "Shared with me". */
export const sharedWithMeIcon = new LabIcon({
  name: 'cgu-lab:shared-with-me',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M9 11a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7zm0 2c-3.3 0-6 1.6-6 3.6V19h12v-2.4C15 14.6 12.3 13 9 13zm8-1.5V9h-3V7h3V4.5L21 8z"/>' +
    '</svg>'
});

/** Stacked pages, for "Save as template". */
export const templateIcon = new LabIcon({
  name: 'cgu-lab:template',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M8 2h9l5 5v11a2 2 0 0 1-2 2H8a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2zm8 1.5V8h4.5zM4 6v14a2 2 0 0 0 2 2h11v-2H6V6z"/>' +
    '</svg>'
});

/** A tray with an arrow up, for "Submit". */
export const submitIcon = new LabIcon({
  name: 'cgu-lab:submit',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M11 16V7.8l-3.3 3.3-1.4-1.4L12 4l5.7 5.7-1.4 1.4L13 7.8V16zm-7 0h2v3h12v-3h2v5H4z"/>' +
    '</svg>'
});

/** A mortarboard, for the Course panel. */
export const courseIcon = new LabIcon({
  name: 'cgu-lab:course',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M12 3 1 9l11 6 9-4.9V17h2V9zm-6 9.2v4L12 20l6-3.8v-4L12 15.5z"/>' +
    '</svg>'
});

/** A cup, for "Compete": apart from Submit's tray, and alone on the toolbar (no label). */
export const competeIcon = new LabIcon({
  name: 'cgu-lab:compete',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M7 3h10v2h3v3a4 4 0 0 1-4 4h-.3A5 5 0 0 1 13 14.9V18h3v3H8v-3h3v-3.1A5 5 0 0 1 8.3 12H8a4 4 0 0 1-4-4V5h3zm0 4H6v1a2 2 0 0 0 1 1.7zm10 0v2.7A2 2 0 0 0 18 8V7z"/>' +
    '</svg>'
});
