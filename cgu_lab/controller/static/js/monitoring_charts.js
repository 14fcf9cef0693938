// @ts-check
// The Monitoring page's charts: building them with Chart.js (window.Chart, from the UMD
// bundle monitoring.html loads by a plain <script> before the page's module) and redrawing
// them, with an aria-label per canvas, from each sample. Kept apart from the tables and the
// polling so the page's Chart.js usage sits in one place; without Chart.js every chart is null
// and only the labels change.
import { showStatus } from './common.js';
import { percent, clock, clockSeconds, bytes } from './monitoring_format.js';

const Chart = window.Chart;
const COLORS = ['#1f5fae', '#d9730d', '#2e8540', '#8e44ad', '#b3261e', '#00838f', '#5b6575'];
const CAUSES = ['user', 'admin', 'idle', 'lifetime', 'reclaim'];
const STATES = ['running', 'starting', 'queued', 'stopping', 'stopped'];
const STATE_COLORS = {
  running: '#2e8540',
  starting: '#d9730d',
  queued: '#8e44ad',
  stopping: '#d9730d',
  stopped: '#9aa5b5'
};
const GIB = 2 ** 30;
const HOUR = 3600;

/** The page's charts, on their canvases; each null without Chart.js (a status says so). */
export function createCharts() {
  if (Chart) {
    Chart.defaults.font.family = getComputedStyle(document.documentElement).fontFamily;
    Chart.defaults.color = '#3a4456';
    Chart.defaults.animation = false;
    Chart.defaults.maintainAspectRatio = false;
  } else {
    showStatus(
      'The charts are missing (the chart library was not built: run "jlpm build"); the tables still update.',
      'error'
    );
  }
  return {
    cpu: timeChart('chart-cpu', { yMax: 100 }),
    memory: timeChart('chart-memory'),
    gpu: timeChart('chart-gpu', { yMax: 100 }),
    notebooks: timeChart('chart-notebooks', { precision: 0 }),
    users: timeChart('chart-users', { stacked: true, legend: true }),
    allocation: barChart('chart-allocation', { horizontal: true }),
    states: barChart('chart-states', { legend: false }),
    stops: barChart('chart-stops', { legend: false })
  };
}

/** @typedef {ReturnType<typeof createCharts>} Charts */

/**
 * A line chart over time on the canvas `id`; null without Chart.js.
 * @param {string} id
 * @param {{ yMax?: number, yTitle?: string, precision?: number, stacked?: boolean, legend?: boolean }} [options]
 */
function timeChart(id, { yMax, yTitle, precision, stacked = false, legend = false } = {}) {
  if (!Chart) return null;
  return new Chart(/** @type {HTMLCanvasElement} */ (document.getElementById(id)), {
    type: 'line',
    data: { datasets: [] },
    options: {
      interaction: { mode: 'index', intersect: false },
      plugins: {
        legend: { display: legend, position: 'bottom', labels: { boxWidth: 12 } },
        tooltip: { callbacks: { title: items => (items.length ? clock(items[0].parsed.x) : '') } }
      },
      scales: {
        x: {
          type: 'linear',
          ticks: { callback: clock, maxRotation: 0, includeBounds: false },
          grid: { display: false }
        },
        y: {
          beginAtZero: true,
          max: yMax,
          stacked,
          ticks: { precision },
          title: { display: Boolean(yTitle), text: yTitle }
        }
      },
      elements: { point: { radius: 0, hitRadius: 6 }, line: { borderWidth: 2, tension: 0.2 } }
    }
  });
}

/**
 * A bar chart on the canvas `id`; null without Chart.js.
 * @param {string} id
 * @param {{ horizontal?: boolean, yMax?: number, stacked?: boolean, legend?: boolean }} [options]
 */
function barChart(id, { horizontal = false, yMax, stacked = false, legend = true } = {}) {
  if (!Chart) return null;
  const value = { beginAtZero: true, max: yMax, ticks: { precision: 0 }, stacked };
  const category = { grid: { display: false }, stacked };
  return new Chart(/** @type {HTMLCanvasElement} */ (document.getElementById(id)), {
    type: 'bar',
    data: { labels: [], datasets: [] },
    options: {
      indexAxis: horizontal ? 'y' : 'x',
      plugins: { legend: { display: legend, position: 'bottom', labels: { boxWidth: 12 } } },
      scales: horizontal ? { x: value, y: category } : { x: category, y: value }
    }
  });
}

/**
 * @param {string} label
 * @param {{ x: number, y: number | null }[]} points
 * @param {string} color
 * @param {boolean | string} [fill] true, or Chart.js's '-1' (down to the dataset below) or 'origin'
 */
function series(label, points, color, fill = true) {
  return {
    label,
    data: points,
    borderColor: color,
    backgroundColor: `${color}33`,
    fill,
    spanGaps: false
  };
}

// The time axis spans the history there is (an hour at most), with ticks on round times.
const STEPS = [10, 15, 30, 60, 120, 300, 600, 900];

/**
 * @param {ReturnType<typeof timeChart>} chart
 * @param {ReturnType<typeof series>[]} datasets
 * @param {[number, number]} range start and end, in seconds
 * @param {number} [yMax]
 */
function drawTime(chart, datasets, [start, end], yMax) {
  if (!chart) return;
  const span = Math.max(end - start, 60);
  const step = STEPS.find(s => span / s <= 7) ?? 900;
  chart.data.datasets = datasets;
  // timeChart made the x axis linear: its ticks take a step.
  const x = /** @type {import('chart.js').ScaleOptionsByType<'linear'>} */ (chart.options.scales.x);
  x.min = end - span;
  x.max = end;
  x.ticks.stepSize = step;
  x.ticks.callback = step < 60 ? clockSeconds : clock;
  if (yMax !== undefined) chart.options.scales.y.max = yMax;
  chart.update('none');
}

function describe(id, text) {
  document.getElementById(id).setAttribute('aria-label', text);
}

function peak(values) {
  const known = values.filter(v => v !== null && v !== undefined);
  return known.length ? Math.max(...known) : null;
}

/**
 * The last hour: CPU, memory, GPU, running notebooks and CPU cores by user.
 * @param {Charts} charts
 */
export function drawSystem(charts, data) {
  const history = data.history;
  const end = history.length ? history[history.length - 1].at : data.at;
  /** @type {[number, number]} */
  const range = [Math.max(history.length ? history[0].at : end, end - HOUR), end];
  drawCpuHistory(charts, data, range);
  drawMemoryHistory(charts, data, range);
  drawGpuHistory(charts, data, range);
  drawNotebookHistory(charts, data, range);
  drawUserHistory(charts, data, range);
}

/**
 * @param {Charts} charts
 * @param {[number, number]} range
 */
function drawCpuHistory(charts, data, range) {
  const history = data.history;
  const cpu = history.map(h => ({ x: h.at, y: h.cpu_percent }));
  drawTime(charts.cpu, [series('CPU %', cpu, COLORS[0])], range);
  describe(
    'chart-cpu',
    `CPU use over the last hour: now ${percent(data.node.cpu_percent)}, peak ${percent(peak(history.map(h => h.cpu_percent)))}`
  );
}

/**
 * @param {Charts} charts
 * @param {[number, number]} range
 */
function drawMemoryHistory(charts, data, range) {
  const totalGib = (data.node.memory_total || 0) / GIB;
  const memory = data.history.map(h => ({ x: h.at, y: h.memory_used / GIB }));
  drawTime(
    charts.memory,
    [series('Memory (GiB)', memory, COLORS[2])],
    range,
    totalGib ? Math.ceil(totalGib) : undefined
  );
  describe(
    'chart-memory',
    `Memory in use over the last hour: now ${bytes(data.node.memory_used)} of ${bytes(data.node.memory_total)}`
  );
}

/**
 * @param {Charts} charts
 * @param {[number, number]} range
 */
function drawGpuHistory(charts, data, range) {
  const history = data.history;
  const hasGpu =
    data.gpus.length > 0 || history.some(h => h.gpu_utilization !== null && h.gpu_utilization !== undefined);
  document.getElementById('gpu-history-box').hidden = !hasGpu;
  document.getElementById('gpu-history-empty').hidden = hasGpu;
  if (hasGpu) {
    const gpu = history.map(h => ({ x: h.at, y: h.gpu_utilization ?? null }));
    drawTime(charts.gpu, [series('GPU %', gpu, COLORS[1])], range);
    const now = data.gpus.length ? data.gpus.reduce((s, g) => s + (g.utilization ?? 0), 0) / data.gpus.length : null;
    describe('chart-gpu', `Mean GPU utilisation over the last hour: now ${percent(now)}`);
  }
}

/**
 * @param {Charts} charts
 * @param {[number, number]} range
 */
function drawNotebookHistory(charts, data, range) {
  const running = data.history.map(h => ({ x: h.at, y: h.notebooks }));
  drawTime(charts.notebooks, [{ ...series('Running notebooks', running, COLORS[3]), stepped: true }], range);
  describe('chart-notebooks', `Running notebooks over the last hour: now ${data.states.running ?? 0}`);
}

/** The users with the most CPU cores over the hour, busiest first (at most 5), and everyone's totals. */
function busiestUsers(history) {
  const totals = new Map();
  for (const h of history) {
    for (const [user, use] of Object.entries(h.users || {})) {
      totals.set(user, (totals.get(user) ?? 0) + use.cpu_cores);
    }
  }
  const top = [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([user]) => user);
  return { totals, top };
}

/**
 * The busiest users over the hour, stacked; everyone else together.
 * @param {Charts} charts
 * @param {[number, number]} range
 */
function drawUserHistory(charts, data, range) {
  const history = data.history;
  const { totals, top } = busiestUsers(history);
  const datasets = top.map((user, i) => ({
    ...series(
      user,
      history.map(h => ({ x: h.at, y: h.users?.[user]?.cpu_cores ?? 0 })),
      COLORS[i],
      i ? '-1' : 'origin'
    )
  }));
  if (totals.size > top.length) {
    const others = history.map(h => ({
      x: h.at,
      y: Object.entries(h.users || {})
        .filter(([u]) => !top.includes(u))
        .reduce((s, [, use]) => s + use.cpu_cores, 0)
    }));
    datasets.push(series('everyone else', others, COLORS[6], '-1'));
  }
  drawTime(charts.users, datasets, range);
  describe(
    'chart-users',
    top.length ? `CPU cores by user over the last hour; busiest: ${top.join(', ')}` : 'No notebook ran in the last hour'
  );
}

/**
 * GPUs allocated against capacity, per GPU type.
 * @param {Charts} charts
 */
export function drawAllocation(charts, data) {
  const rows = data.allocation;
  document.getElementById('allocation-empty').hidden = rows.length > 0;
  document.getElementById('chart-allocation').parentElement.hidden = rows.length === 0;
  if (charts.allocation) {
    charts.allocation.data.labels = rows.map(r => r.gpu_type);
    charts.allocation.data.datasets = [
      { label: 'allocated', data: rows.map(r => r.allocated), backgroundColor: COLORS[1] },
      { label: 'capacity', data: rows.map(r => r.capacity), backgroundColor: '#b9c6d8' }
    ];
    charts.allocation.update('none');
  }
  describe(
    'chart-allocation',
    rows.length
      ? `GPU allocation: ${rows.map(r => `${r.gpu_type} ${r.allocated} of ${r.capacity}`).join('; ')}`
      : 'No GPU types are defined'
  );
}

/**
 * Notebooks by state.
 * @param {Charts} charts
 */
export function drawStates(charts, data) {
  const names = [...STATES, ...Object.keys(data.states).filter(s => !STATES.includes(s))];
  const counts = names.map(s => data.states[s] ?? 0);
  if (charts.states) {
    charts.states.data.labels = names;
    charts.states.data.datasets = [
      { label: 'notebooks', data: counts, backgroundColor: names.map(s => STATE_COLORS[s] ?? COLORS[6]) }
    ];
    charts.states.update('none');
  }
  describe('chart-states', `Notebooks by state: ${names.map((s, i) => `${s} ${counts[i]}`).join(', ')}`);
}

/**
 * Notebook stops by cause; the culler's causes in green.
 * @param {Charts} charts
 */
export function drawStops(charts, data) {
  const names = [...CAUSES, ...Object.keys(data.stops).filter(c => !CAUSES.includes(c))];
  const counts = names.map(c => data.stops[c] ?? 0);
  if (charts.stops) {
    charts.stops.data.labels = names;
    charts.stops.data.datasets = [
      {
        label: 'stops',
        data: counts,
        backgroundColor: names.map(c => (['idle', 'lifetime', 'reclaim'].includes(c) ? COLORS[2] : '#9aa5b5'))
      }
    ];
    charts.stops.update('none');
  }
  describe('chart-stops', `Notebook stops by cause: ${names.map((c, i) => `${c} ${counts[i]}`).join(', ')}`);
}
