// @ts-check
// The Monitoring page's tables of who uses what: the sortable users and notebooks tables,
// and `bar`, the figure-with-a-bar cell they share with the node cards. Kept apart from the
// charts and the polling: these build DOM only, and work with or without Chart.js.
import { el, replaceRows } from './common.js';
import { percent, amount, cores, bytes } from './monitoring_format.js';

/** A table cell's bar: `fraction` of it filled (marked high from 90%), with `text` beside it. */
export function bar(fraction, text, label) {
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

/** A column's heading: a button that sorts by it where it sorts. */
function sortHeader(col, onSort) {
  const th = el('th', { scope: 'col' });
  if (col.sort) {
    th.append(
      el(
        'button',
        { type: 'button', class: 'sort', onclick: onSort },
        col.label,
        el('span', { class: 'arrow', 'aria-hidden': 'true' })
      )
    );
  } else {
    th.append(col.label);
  }
  return th;
}

/** Rows by `col`; ties by GPUs, then CPU (both descending), then the first column. */
function rowOrder(columns, col, descending) {
  return (a, b) => {
    const x = col.sort(a);
    const y = col.sort(b);
    const primary = typeof x === 'string' ? x.localeCompare(y) : x - y;
    if (primary) return descending ? -primary : primary;
    return b.gpus - a.gpus || b.cpu_cores - a.cpu_cores || columns[0].sort(a).localeCompare(columns[0].sort(b));
  };
}

function markSorted(headers, columns, sortKey, descending) {
  headers.forEach((th, i) => {
    const active = columns[i].key === sortKey;
    if (active) th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
    else th.removeAttribute('aria-sort');
    const arrow = th.querySelector('.arrow');
    if (arrow) arrow.textContent = active ? (descending ? ' ▼' : ' ▲') : '';
  });
}

function tableRow(columns, row) {
  return el(
    'tr',
    {},
    columns.map((c, i) =>
      i === 0 ? el('th', { scope: 'row' }, c.cell(row)) : el('td', { class: c.numeric ? 'num' : null }, c.cell(row))
    )
  );
}

/** A table whose column headings sort it; default order: GPUs, then CPU, both descending. */
function sortable(table, columns, emptyText) {
  let sortKey = 'gpus';
  let descending = true;
  let rows = [];
  const tbody = el('tbody');
  const headers = columns.map(col =>
    sortHeader(col, () => {
      descending = sortKey === col.key ? !descending : col.numeric;
      sortKey = col.key;
      render();
    })
  );
  table.replaceChildren(el('thead', {}, el('tr', {}, headers)), tbody);

  function render() {
    const order = rowOrder(
      columns,
      columns.find(c => c.key === sortKey),
      descending
    );
    markSorted(headers, columns, sortKey, descending);
    replaceRows(
      tbody,
      [...rows].sort(order).map(row => tableRow(columns, row)),
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

/** @typedef {{ users: ReturnType<typeof sortable>, notebooks: ReturnType<typeof sortable> }} WhoTables */

function userColumns(cpus, memoryTotal) {
  return [
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
  ];
}

function notebookNameCell(n) {
  return [
    `${n.owner}/${n.notebook}`,
    n.persistent ? el('span', { class: 'badge' }, 'persistent') : null,
    n.readable
      ? null
      : el('span', { class: 'badge warn', title: 'its server did not answer the last reading' }, 'no reading')
  ];
}

function gpuUseCell(n) {
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

function notebookColumns() {
  return [
    { key: 'name', label: 'Notebook', sort: n => `${n.owner}/${n.notebook}`, cell: notebookNameCell },
    {
      key: 'gpus',
      label: 'GPUs',
      numeric: true,
      sort: n => n.gpus,
      cell: n => (n.gpus ? `${n.gpus}× ${n.gpu_type}` : '—')
    },
    { key: 'gpu_utilization', label: 'GPU use', numeric: true, sort: n => n.gpu_utilization ?? -1, cell: gpuUseCell },
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
  ];
}

/**
 * Fills the users and notebooks tables from a sample and returns them. They are made on the
 * first call (`tables` null), and their bars keep the node size of that first sample.
 * @param {WhoTables | null} tables
 * @returns {WhoTables}
 */
export function drawWho(tables, data) {
  if (!tables) {
    const cpus = data.node.cpus || 1;
    const memoryTotal = data.node.memory_total || 1;
    tables = {
      users: sortable(
        document.getElementById('users-table'),
        userColumns(cpus, memoryTotal),
        'Nobody has a notebook running.'
      ),
      notebooks: sortable(document.getElementById('notebooks-table'), notebookColumns(), 'No notebook is running.')
    };
  }
  tables.users.update(data.users);
  tables.notebooks.update(data.notebooks.map(n => ({ ...n, user: n.owner })));
  return tables;
}
