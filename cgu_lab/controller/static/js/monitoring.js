// @ts-check
// Monitoring (admins): live load of the platform from /api/monitoring, redrawn every few
// seconds while the tab is visible. Charts use Chart.js (vendored at build time into
// /static/vendor/ and loaded by a plain <script> before this module); tables and text
// carry the same figures for screen readers and for a page whose chart library is missing.
import { api, el, replaceRows, showStatus, formatMemory } from './common.js';

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

const charts = {};
const nodeCards = new Map();
let timer = null;
let paused = false;
let lastAt = null;
let pollSeconds = 5;
let failing = false;

// -- formatting -----------------------------------------------------------------

function round(value, digits = 1) {
  return value === null || value === undefined ? '—' : (+value.toFixed(digits)).toLocaleString();
}

function percent(value) {
  return value === null || value === undefined ? '—' : `${round(value, 0)}%`;
}

function clock(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

function clockSeconds(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

function amount(value) {
  if (value === null || value === undefined) return '—';
  return value > 0 && value < 0.01 ? '<0.01' : round(value, 2);
}

/** Small figures keep two significant digits (0.0042 kWh), larger ones one decimal. */
function figure(value) {
  if (!value) return '0';
  return value < 1 ? String(+value.toPrecision(2)) : round(value, 1);
}

function cores(value) {
  return `${amount(value)} ${value === 1 ? 'core' : 'cores'}`;
}

function bytes(value) {
  return value ? formatMemory(value) : '0';
}

function bar(fraction, text, label) {
  const fill = el('span', { class: 'bar-fill' });
  const share = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
  fill.style.width = `${(share * 100).toFixed(1)}%`;
  if (share >= 0.9) fill.classList.add('high');
  return el(
    'div',
    { class: 'bar-cell', title: label || null },
    el('span', { class: 'bar', 'aria-hidden': 'true' }, fill),
    el('span', { class: 'bar-text' }, text)
  );
}

// -- charts ---------------------------------------------------------------------

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

function drawSystem(data) {
  const history = data.history;
  const end = history.length ? history[history.length - 1].at : data.at;
  /** @type {[number, number]} */
  const range = [Math.max(history.length ? history[0].at : end, end - HOUR), end];
  const cpu = history.map(h => ({ x: h.at, y: h.cpu_percent }));
  drawTime(charts.cpu, [series('CPU %', cpu, COLORS[0])], range);
  describe(
    'chart-cpu',
    `CPU use over the last hour: now ${percent(data.node.cpu_percent)}, peak ${percent(peak(history.map(h => h.cpu_percent)))}`
  );

  const totalGib = (data.node.memory_total || 0) / GIB;
  const memory = history.map(h => ({ x: h.at, y: h.memory_used / GIB }));
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

  const running = history.map(h => ({ x: h.at, y: h.notebooks }));
  drawTime(charts.notebooks, [{ ...series('Running notebooks', running, COLORS[3]), stepped: true }], range);
  describe('chart-notebooks', `Running notebooks over the last hour: now ${data.states.running ?? 0}`);

  // The busiest users over the hour, stacked; everyone else together.
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

// -- nodes ----------------------------------------------------------------------

function nodeCard(name) {
  let card = nodeCards.get(name);
  if (!card) {
    const id = `node-${nodeCards.size}`;
    card = {
      root: el('article', { class: 'node', 'aria-labelledby': `${id}-title` }),
      title: el('h3', { id: `${id}-title` }),
      facts: el('div', { class: 'node-facts' }),
      gpus: el('div', { class: 'node-gpus' })
    };
    card.root.append(card.title, card.facts, card.gpus);
    document.getElementById('nodes').append(card.root);
    nodeCards.set(name, card);
  }
  return card;
}

function gpuTable(gpus) {
  const rows = gpus.map((gpu, i) =>
    el(
      'tr',
      {},
      el('th', { scope: 'row' }, `GPU ${i}`, el('div', { class: 'hint mono' }, gpu.uuid)),
      el('td', {}, gpu.model),
      el(
        'td',
        {},
        gpu.utilization === null || gpu.utilization === undefined
          ? el('span', { class: 'hint' }, 'not reported')
          : bar(gpu.utilization / 100, percent(gpu.utilization))
      ),
      el(
        'td',
        {},
        bar(
          gpu.memory_total ? gpu.memory_used / gpu.memory_total : 0,
          `${bytes(gpu.memory_used)} / ${bytes(gpu.memory_total)}`
        )
      )
    )
  );
  return el(
    'table',
    { class: 'list compact' },
    el('caption', { class: 'sr-only' }, 'GPUs of this node'),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, 'GPU'),
        el('th', { scope: 'col' }, 'Model'),
        el('th', { scope: 'col' }, 'Utilisation'),
        el('th', { scope: 'col' }, 'Memory')
      )
    ),
    el('tbody', {}, rows)
  );
}

function gpuCounts(node) {
  const parts = [`${node.detected} detected`, `${node.declared} declared`];
  if (node.declared_and_detected) parts.push(`${node.declared_and_detected} of them both`);
  return `${node.total} in all (${parts.join(', ')}) · ${node.held} held by notebooks`;
}

function drawNodes(data) {
  const nodes = data.nodes ?? (data.node && data.node.node ? [data.node] : []);
  for (const node of nodes) {
    const card = nodeCard(node.node);
    const gpus = data.gpus.filter(g => g.node === node.node);
    const sampled = node.cpu_percent !== undefined && node.cpu_percent !== null;
    card.title.textContent = sampled ? `${node.node} (this machine)` : node.node;
    const facts = [];
    if (sampled) {
      facts.push(
        el(
          'div',
          { class: 'fact' },
          el('span', { class: 'fact-label' }, `CPU (${node.cpus} cores)`),
          bar(node.cpu_percent / 100, percent(node.cpu_percent))
        ),
        el(
          'div',
          { class: 'fact' },
          el('span', { class: 'fact-label' }, 'Memory'),
          bar(
            node.memory_total ? node.memory_used / node.memory_total : 0,
            `${bytes(node.memory_used)} / ${bytes(node.memory_total)}`
          )
        )
      );
    }
    facts.push(
      el(
        'div',
        { class: 'fact', dataset: { gpuCounts: node.node } },
        el('span', { class: 'fact-label' }, 'GPUs'),
        el('span', {}, gpuCounts({ detected: 0, declared: 0, total: 0, held: 0, ...node }))
      )
    );
    card.facts.replaceChildren(...facts);
    const notes = [];
    const undetected = (node.declared ?? 0) - (node.declared_and_detected ?? 0);
    if (undetected > 0) {
      notes.push(
        el(
          'p',
          { class: 'hint' },
          `${undetected} declared GPU${undetected === 1 ? ' is' : 's are'} not detected on this node: `,
          'notebooks are placed on them, but no live figures exist for them (no NVIDIA driver seen here, or a planned layout). ',
          el('a', { href: '/admin/gpus' }, 'See the devices')
        )
      );
    }
    card.gpus.replaceChildren(
      gpus.length
        ? gpuTable(gpus)
        : el(
            'p',
            { class: 'empty' },
            node.total ? 'No live GPU figures for this node.' : 'No GPU detected or declared on this node.'
          ),
      ...notes
    );
  }
  for (const [name, card] of nodeCards) {
    if (!nodes.some(n => n.node === name)) {
      card.root.remove();
      nodeCards.delete(name);
    }
  }
  if (!nodes.length) {
    document.getElementById('nodes').replaceChildren(el('p', { class: 'empty' }, 'Waiting for the first sample…'));
  }
}

// -- who uses what ----------------------------------------------------------------

/** A table whose column headings sort it; default order: GPUs, then CPU, both descending. */
function sortable(table, columns, emptyText) {
  let sortKey = 'gpus';
  let descending = true;
  let rows = [];
  const tbody = el('tbody');
  const headers = columns.map(col => {
    const th = el('th', { scope: 'col' });
    if (col.sort) {
      th.append(
        el(
          'button',
          {
            type: 'button',
            class: 'sort',
            onclick: () => {
              descending = sortKey === col.key ? !descending : col.numeric;
              sortKey = col.key;
              render();
            }
          },
          col.label,
          el('span', { class: 'arrow', 'aria-hidden': 'true' })
        )
      );
    } else {
      th.append(col.label);
    }
    return th;
  });
  table.replaceChildren(el('thead', {}, el('tr', {}, headers)), tbody);

  function render() {
    const col = columns.find(c => c.key === sortKey);
    const order = (a, b) => {
      const x = col.sort(a);
      const y = col.sort(b);
      const primary = typeof x === 'string' ? x.localeCompare(y) : x - y;
      if (primary) return descending ? -primary : primary;
      return b.gpus - a.gpus || b.cpu_cores - a.cpu_cores || columns[0].sort(a).localeCompare(columns[0].sort(b));
    };
    headers.forEach((th, i) => {
      const active = columns[i].key === sortKey;
      if (active) th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      else th.removeAttribute('aria-sort');
      const arrow = th.querySelector('.arrow');
      if (arrow) arrow.textContent = active ? (descending ? ' ▼' : ' ▲') : '';
    });
    replaceRows(
      tbody,
      [...rows].sort(order).map(row =>
        el(
          'tr',
          {},
          columns.map((c, i) =>
            i === 0
              ? el('th', { scope: 'row' }, c.cell(row))
              : el('td', { class: c.numeric ? 'num' : null }, c.cell(row))
          )
        )
      ),
      emptyText,
      columns.length
    );
  }

  return {
    update(next) {
      rows = next;
      render();
    }
  };
}

let usersTable = null;
let notebooksTable = null;

function drawWho(data) {
  const cpus = data.node.cpus || 1;
  const memoryTotal = data.node.memory_total || 1;
  if (!usersTable) {
    usersTable = sortable(
      document.getElementById('users-table'),
      [
        { key: 'user', label: 'User', sort: u => u.user, cell: u => u.user },
        { key: 'notebooks', label: 'Notebooks', numeric: true, sort: u => u.notebooks, cell: u => u.notebooks },
        { key: 'gpus', label: 'GPUs', numeric: true, sort: u => u.gpus, cell: u => u.gpus },
        {
          key: 'cpu_cores',
          label: 'CPU',
          numeric: true,
          sort: u => u.cpu_cores,
          cell: u => bar(u.cpu_cores / cpus, cores(u.cpu_cores), "share of the node's CPUs")
        },
        {
          key: 'memory_bytes',
          label: 'Memory',
          numeric: true,
          sort: u => u.memory_bytes,
          cell: u => bar(u.memory_bytes / memoryTotal, bytes(u.memory_bytes), "share of the node's memory")
        }
      ],
      'Nobody has a notebook running.'
    );
    notebooksTable = sortable(
      document.getElementById('notebooks-table'),
      [
        {
          key: 'name',
          label: 'Notebook',
          sort: n => `${n.owner}/${n.notebook}`,
          cell: n => [
            `${n.owner}/${n.notebook}`,
            n.persistent ? el('span', { class: 'badge' }, 'persistent') : null,
            n.readable
              ? null
              : el('span', { class: 'badge warn', title: 'its server did not answer the last reading' }, 'no reading')
          ]
        },
        {
          key: 'gpus',
          label: 'GPUs',
          numeric: true,
          sort: n => n.gpus,
          cell: n => (n.gpus ? `${n.gpus}× ${n.gpu_type}` : '—')
        },
        {
          key: 'gpu_utilization',
          label: 'GPU use',
          numeric: true,
          sort: n => n.gpu_utilization ?? -1,
          cell: n => {
            if (!n.gpus) return '—';
            if (n.gpu_utilization === null || n.gpu_utilization === undefined) {
              return el(
                'span',
                { class: 'hint' },
                n.gpu_memory_bytes ? `${bytes(n.gpu_memory_bytes)}; use not reported` : 'not reported'
              );
            }
            return bar(n.gpu_utilization / 100, `${percent(n.gpu_utilization)} · ${bytes(n.gpu_memory_bytes)}`);
          }
        },
        {
          key: 'cpu_cores',
          label: 'CPU',
          numeric: true,
          sort: n => n.cpu_cores,
          cell: n =>
            bar(
              n.cpu_limit ? n.cpu_cores / n.cpu_limit : 0,
              `${amount(n.cpu_cores)} / ${cores(n.cpu_limit)}`,
              'used of its limit'
            )
        },
        {
          key: 'memory_bytes',
          label: 'Memory',
          numeric: true,
          sort: n => n.memory_bytes,
          cell: n =>
            bar(
              n.memory_limit ? n.memory_bytes / n.memory_limit : 0,
              `${bytes(n.memory_bytes)} / ${bytes(n.memory_limit)}`,
              'used of its limit'
            )
        }
      ],
      'No notebook is running.'
    );
  }
  usersTable.update(data.users);
  notebooksTable.update(data.notebooks.map(n => ({ ...n, user: n.owner })));
}

// -- allocation, states, culler ----------------------------------------------------------

function drawAllocation(data) {
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

function drawStates(data) {
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

function drawCuller(data) {
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
  const savings = document.getElementById('savings');
  savings.replaceChildren(
    tile('Idle GPU-hours reclaimed', figure(data.reclaimed_gpu_hours)),
    tile('Energy saved (estimate)', `${figure(data.energy_saved_kwh)} kWh`),
    tile('Stopped by the culler', String((data.stops.idle ?? 0) + (data.stops.lifetime ?? 0))),
    tile('Reclaimed for a waiting notebook', String(data.stops.reclaim ?? 0))
  );
}

function tile(label, value) {
  return el('div', { class: 'tile' }, el('dt', {}, label), el('dd', {}, value));
}

function gpuInventoryText(data) {
  const inv = data.gpu_inventory;
  if (!inv) return String(data.gpus.length);
  return `${inv.detected} / ${inv.declared}`;
}

function drawSummary(data) {
  const held = data.allocation.reduce((s, a) => s + a.allocated, 0);
  const capacity = data.allocation.reduce((s, a) => s + a.capacity, 0);
  document
    .getElementById('summary')
    .replaceChildren(
      tile('Running notebooks', String(data.states.running ?? 0)),
      tile('Users with notebooks', String(data.users.length)),
      tile('CPU', percent(data.node.cpu_percent)),
      tile('Memory', `${bytes(data.node.memory_used)} / ${bytes(data.node.memory_total)}`),
      tile('GPUs detected / declared', gpuInventoryText(data)),
      tile('GPU notebooks held / capacity', `${held} / ${capacity}`)
    );
}

// -- polling ----------------------------------------------------------------------

function draw(data) {
  drawSummary(data);
  drawSystem(data);
  drawNodes(data);
  drawWho(data);
  drawAllocation(data);
  drawStates(data);
  drawCuller(data);
}

async function refresh() {
  clearTimeout(timer);
  timer = null;
  try {
    const data = await api('GET', '/api/monitoring');
    pollSeconds = Math.max(2, Math.min(data.interval || 5, 5));
    if (!data.at) {
      document.getElementById('updated').textContent = 'Waiting for the first sample…';
    } else if (data.at !== lastAt) {
      lastAt = data.at;
      draw(data);
      document.getElementById('updated').textContent =
        `Sampled ${new Date(data.at * 1000).toLocaleTimeString()} (every ${round(data.interval, 0)} s)`;
    }
    if (failing) {
      failing = false;
      showStatus('The monitoring data is up to date again.');
    }
  } catch (error) {
    failing = true;
    showStatus(`Could not read the monitoring data: ${error.message}`, 'error');
  }
  schedule();
}

function schedule() {
  clearTimeout(timer);
  timer = paused || document.hidden ? null : setTimeout(refresh, pollSeconds * 1000);
}

document.addEventListener('visibilitychange', () => {
  if (document.hidden) {
    clearTimeout(timer);
    timer = null;
  } else if (!paused) {
    refresh();
  }
});

const pauseButton = document.getElementById('pause');
pauseButton.addEventListener('click', () => {
  paused = !paused;
  pauseButton.textContent = paused ? 'Resume updates' : 'Pause updates';
  if (paused) schedule();
  else refresh();
});

charts.cpu = timeChart('chart-cpu', { yMax: 100 });
charts.memory = timeChart('chart-memory');
charts.gpu = timeChart('chart-gpu', { yMax: 100 });
charts.notebooks = timeChart('chart-notebooks', { precision: 0 });
charts.users = timeChart('chart-users', { stacked: true, legend: true });
charts.allocation = barChart('chart-allocation', { horizontal: true });
charts.states = barChart('chart-states', { legend: false });
charts.stops = barChart('chart-stops', { legend: false });

refresh();
