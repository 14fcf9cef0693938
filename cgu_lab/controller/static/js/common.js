// Shared helpers of the controller's pages: one way to call the API, build
// DOM safely (never innerHTML with data) and format amounts.

const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? '';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || `request failed (${status})`);
    this.status = status;
    this.body = body;
  }
}

export async function api(method, path, body) {
  const init = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
  if (method !== 'GET') {
    init.headers['X-CSRF-Token'] = csrf;
  }
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { message: text };
    }
  }
  if (response.status === 401) {
    window.location.assign('/login?next=' + encodeURIComponent(location.pathname + location.search));
  }
  if (!response.ok) {
    throw new ApiError(response.status, data);
  }
  return data;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      node.addEventListener(key.slice(2), value);
    } else if (key === 'dataset') {
      Object.assign(node.dataset, value);
    } else {
      node.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function replaceRows(tbody, rows, emptyText, columns) {
  tbody.replaceChildren(
    ...(rows.length ? rows : [el('tr', {}, el('td', { colspan: columns }, emptyText))])
  );
}

export function showStatus(message, kind = 'info') {
  const box = document.getElementById('status');
  box.textContent = message;
  box.className = `status ${kind}`;
  box.hidden = false;
}

export function showError(id, error) {
  const box = document.getElementById(id);
  if (!error) {
    box.hidden = true;
    box.textContent = '';
    return;
  }
  box.textContent = error.message || String(error);
  box.hidden = false;
}

export function formatMemory(bytes) {
  if (bytes === null || bytes === undefined) return 'no limit';
  const units = [['TiB', 2 ** 40], ['GiB', 2 ** 30], ['MiB', 2 ** 20]];
  for (const [unit, size] of units) {
    if (bytes >= size) return `${+(bytes / size).toPrecision(3)} ${unit}`;
  }
  return `${bytes} B`;
}

export function formatCpu(milli) {
  if (milli === null || milli === undefined) return 'no limit';
  const cores = milli / 1000;
  return `${+cores.toPrecision(3)} CPU${cores === 1 ? '' : 's'}`;
}

export function formatGpus(gpus) {
  if (gpus === null || gpus === undefined) return 'any GPUs';
  const parts = Object.entries(gpus).map(([type, count]) => `${count}× ${type}`);
  return parts.length ? parts.join(', ') : 'no GPUs';
}

/**
 * GPU limits as typed in a quota: "standard=1, premium=2". Empty means no GPU at all (a
 * type not listed allows none, as the README and core/quota.py say); "any" means no limit.
 */
export function parseGpus(text) {
  const trimmed = text.trim();
  if (!trimmed) return {};
  if (trimmed.toLowerCase() === 'any') return null;
  const result = {};
  for (const part of trimmed.split(',')) {
    const [type, count] = part.split('=').map(s => s.trim());
    if (!type || count === undefined || !/^\d+$/.test(count)) {
      throw new Error(`write GPU limits as type=count, separated by commas (not "${part.trim()}")`);
    }
    result[type] = Number(count);
  }
  return result;
}

export function gpusText(gpus) {
  if (gpus === null || gpus === undefined) return 'any';
  return Object.entries(gpus).map(([t, c]) => `${t}=${c}`).join(', ');
}

export function formatDate(value) {
  if (!value) return '—';
  return new Date(value).toLocaleString();
}

/** "3 minutes ago", "2 days ago" (or "—" for never): how long since `value`. */
export function formatAgo(value, never = '—') {
  if (!value) return never;
  const seconds = Math.max(0, (Date.now() - new Date(value).getTime()) / 1000);
  const steps = [[60, 'second', 1], [3600, 'minute', 60], [86400, 'hour', 3600], [86400 * 30, 'day', 86400],
    [86400 * 365, 'month', 86400 * 30], [Infinity, 'year', 86400 * 365]];
  if (seconds < 45) return 'just now';
  for (const [limit, unit, size] of steps) {
    if (seconds < limit) {
      const count = Math.max(1, Math.round(seconds / size));
      return `${count} ${unit}${count === 1 ? '' : 's'} ago`;
    }
  }
  return never;
}

const ISO_MOMENT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

// Amounts the log keeps in base units, shown as people read them.
const DETAIL_FORMATS = { memory: formatMemory, cpu_milli: formatCpu };

function detailValue(value, key = '') {
  if (value === null || value === undefined) return el('span', { class: 'hint' }, 'none');
  if (typeof value === 'number' && DETAIL_FORMATS[key]) return DETAIL_FORMATS[key](value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' && ISO_MOMENT.test(value)) {
    return el('time', { datetime: value }, formatDate(value));
  }
  if (Array.isArray(value)) {
    if (!value.length) return el('span', { class: 'hint' }, 'none');
    if (value.every(v => v === null || typeof v !== 'object')) return value.map(v => (v === null ? 'none' : String(v))).join(', ');
    return el('ul', {}, value.map(v => el('li', {}, detailValue(v))));
  }
  if (typeof value === 'object') return renderDetails(value);
  return String(value);
}

/** A changed field as the log stores it, [old, new]: "old → new". */
function change(pair) {
  const [before, after] = pair.map(v => (v === null || v === '' ? 'none' : String(v)));
  return [el('span', { class: 'change-old' }, before), ' → ', el('span', {}, after)];
}

/**
 * An audit event's details as a readable list (never raw JSON): one term per key,
 * lists joined, times in local time, a change ({"role": ["student", "ta"]}) as old → new.
 */
export function renderDetails(details) {
  if (!details || typeof details !== 'object') return details ? String(details) : '';
  const entries = Object.entries(details).filter(([, value]) => value !== null && value !== undefined);
  if (!entries.length) return '';
  return el('dl', { class: 'details' }, entries.flatMap(([key, value]) => {
    const label = key === 'cpu_milli' ? 'cpu' : key.replaceAll('_', ' ');
    if (key === 'changes' && value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.entries(value).flatMap(([field, pair]) => [
        el('dt', {}, field.replaceAll('_', ' ')),
        el('dd', {}, Array.isArray(pair) && pair.length === 2 ? change(pair) : detailValue(pair))
      ]);
    }
    return [el('dt', {}, label), el('dd', {}, detailValue(value, key))];
  }));
}

/** A <time> element: relative text, the exact moment as its title and datetime. */
export function timeAgo(value, never = 'never') {
  if (!value) return el('span', { class: 'hint' }, never);
  return el('time', { datetime: value, title: formatDate(value) }, formatAgo(value, never));
}

export function limitsFromForm(form) {
  const data = new FormData(form);
  const value = name => (data.get(name) ?? '').toString().trim();
  return {
    cpu: value('cpu') || null,
    memory: value('memory') || null,
    gpus: parseGpus(value('gpus')),
    notebooks: value('notebooks') === '' ? null : Number(value('notebooks'))
  };
}

export function fillLimitsForm(form, limits) {
  form.elements.cpu.value = limits?.cpu_milli != null ? limits.cpu_milli / 1000 : '';
  form.elements.memory.value = limits?.memory != null ? formatMemory(limits.memory).replace(' ', '') : '';
  form.elements.gpus.value = gpusText(limits?.gpus);
  form.elements.notebooks.value = limits?.notebooks ?? '';
}

export function describeLimits(limits) {
  if (!limits) return 'no budget';
  return [
    formatCpu(limits.cpu_milli),
    formatMemory(limits.memory),
    formatGpus(limits.gpus),
    limits.notebooks == null ? 'any number of notebooks' : `${limits.notebooks} running notebook(s)`
  ].join(' · ');
}

export function describeUsage(usage) {
  if (!usage) return '';
  return `${formatCpu(usage.cpu_milli)} · ${formatMemory(usage.memory)} · ${formatGpus(usage.gpus)} · ${usage.notebooks} running`;
}

export function fact(dl, term, detail) {
  dl.append(el('dt', {}, term), el('dd', {}, detail));
}

/**
 * The admin menu in the top bar is a <details> disclosure (it works without scripts);
 * here it also closes on Escape (focus back on its button), on a click elsewhere and
 * when focus leaves it, as a menu does.
 */
function enhanceNavMenus() {
  for (const menu of document.querySelectorAll('.nav-menu details')) {
    const summary = menu.querySelector('summary');
    menu.addEventListener('keydown', event => {
      if (event.key === 'Escape' && menu.open) {
        menu.open = false;
        summary.focus();
      }
    });
    menu.addEventListener('focusout', event => {
      if (menu.open && event.relatedTarget && !menu.contains(event.relatedTarget)) menu.open = false;
    });
    document.addEventListener('click', event => {
      if (menu.open && !menu.contains(event.target)) menu.open = false;
    });
  }
}
enhanceNavMenus();

/** A dialog that resolves with the button value that closed it. */
export function ask(dialog) {
  return new Promise(resolve => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue), { once: true });
    dialog.showModal();
  });
}
