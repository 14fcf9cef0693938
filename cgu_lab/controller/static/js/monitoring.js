// @ts-check
// Monitoring (admins): live load of the platform from /api/monitoring, redrawn every few
// seconds while the tab is visible. Charts use Chart.js (vendored at build time into
// /static/vendor/ and loaded by a plain <script> before this module); tables and text
// carry the same figures for screen readers and for a page whose chart library is missing.
// This module keeps the page's state and wiring (polling, pause, draw) and the per-node cards
// with their GPU tables; the charts, the who-uses-what tables and the formatting live in
// monitoring_charts.js, monitoring_tables.js and monitoring_format.js.
import { api, el, showStatus } from './common.js';
import { poll } from './poll.js';
import { round, percent, figure, bytes, cores } from './monitoring_format.js';
import { createCharts, drawSystem, drawAllocation, drawStates, drawStops } from './monitoring_charts.js';
import { bar, drawWho } from './monitoring_tables.js';
import { initAhead } from './class_sessions.js';

// The page's state, all of it: the other monitoring modules get what they need as arguments.
const charts = createCharts();
const nodeCards = new Map();
/** @type {import('./monitoring_tables.js').WhoTables | null} */
let whoTables = null;
let lastAt = null;
let pollSeconds = 5;
let failing = false;

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

// What a cluster says of a node (GET /api/monitoring's `cluster`): taking pods or not, its
// CPUs and memory, and its GPU product with the whole GPUs, time-slices and MIG instances it
// offers; a CPU-only node says so.
function clusterOffer(found) {
  const parts = [];
  if (found.product) {
    const product = found.product.replaceAll('-', ' ');
    parts.push(found.gpus ? `${product} × ${found.gpus}` : product);
    if (found.whole) parts.push(`${found.whole} whole`);
    if (found.slices) parts.push(`${found.slices} time-slices (${found.replicas} per GPU)`);
    for (const [profile, count] of Object.entries(found.mig ?? {})) {
      parts.push(`MIG ${profile} × ${count}`);
    }
  } else {
    parts.push('CPU only');
  }
  parts.push(cores(found.cpu_cores), bytes(found.memory_bytes));
  if (found.arch) parts.push(found.arch);
  return parts.join(' · ');
}

function clusterState(found) {
  if (!found.ready) return 'not ready';
  return found.schedulable ? 'takes notebooks' : 'cordoned: takes no new notebooks';
}

function nodeFacts(node, sampled) {
  const facts = [];
  if (node.cluster) {
    facts.push(
      el(
        'div',
        { class: 'fact', dataset: { clusterNode: node.node } },
        el('span', { class: 'fact-label' }, 'In the cluster'),
        el('span', {}, `${clusterOffer(node.cluster)} · ${clusterState(node.cluster)}`)
      )
    );
  }
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
  return facts;
}

function undetectedNotes(node) {
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
  return notes;
}

function drawNode(node, allGpus) {
  const card = nodeCard(node.node);
  const gpus = allGpus.filter(g => g.node === node.node);
  const sampled = node.cpu_percent !== undefined && node.cpu_percent !== null;
  card.title.textContent = sampled ? `${node.node} (this machine)` : node.node;
  card.facts.replaceChildren(...nodeFacts(node, sampled));
  const notes = undetectedNotes(node);
  card.gpus.replaceChildren(
    gpus.length
      ? gpuTable(gpus)
      : el(
          'p',
          { class: 'empty' },
          node.total || node.cluster?.product
            ? 'No live GPU figures for this node.'
            : 'No GPU detected or declared on this node.'
        ),
    ...notes
  );
}

function drawNodes(data) {
  const nodes = data.nodes ?? (data.node && data.node.node ? [data.node] : []);
  for (const node of nodes) {
    drawNode(node, data.gpus);
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

// -- summary and savings --------------------------------------------------------------

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

/** The culler's effect, as tiles under the stops chart. */
function drawSavings(data) {
  const savings = document.getElementById('savings');
  savings.replaceChildren(
    tile('Idle GPU-hours reclaimed', figure(data.reclaimed_gpu_hours)),
    tile('Energy saved (estimate)', `${figure(data.energy_saved_kwh)} kWh`),
    tile('Stopped by the culler', String((data.stops.idle ?? 0) + (data.stops.lifetime ?? 0))),
    tile('Reclaimed for a waiting notebook', String(data.stops.reclaim ?? 0))
  );
}

// -- polling ----------------------------------------------------------------------

function draw(data) {
  drawSummary(data);
  drawSystem(charts, data);
  drawNodes(data);
  whoTables = drawWho(whoTables, data);
  drawAllocation(charts, data);
  drawStates(charts, data);
  drawStops(charts, data);
  drawSavings(data);
}

// Every `pollSeconds` (the sampler's interval, 2 to 5 s) while shown and not paused.
const updates = poll(
  async () => {
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
  },
  {
    everyMs: () => pollSeconds * 1000,
    onError: error => {
      failing = true;
      showStatus(`Could not read the monitoring data: ${error.message}`, 'error');
    }
  }
);

let paused = false;
const pauseButton = document.getElementById('pause');
pauseButton.addEventListener('click', () => {
  paused = !paused;
  pauseButton.textContent = paused ? 'Resume updates' : 'Pause updates';
  updates.pause(paused);
});

updates.now();
// Class sessions booked ahead: read once per visit (bookings change by the day).
initAhead();
