// What the pages find on `window` besides their modules.
import type { Chart } from 'chart.js';

declare global {
  interface Window {
    /** The signed-in user's name, once the notebook list has asked /api/me. */
    cguMe: string;
    /** Chart.js, from the UMD bundle monitoring.html loads before monitoring.js. */
    Chart: typeof Chart;
  }
}
