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
