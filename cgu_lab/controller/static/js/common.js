// @ts-check
// Shared helpers of the controller's pages: one way to call the API, build
// DOM safely (never innerHTML with data) and format amounts.

/**
 * A form whose named controls a script reads (`form.elements.cpu.value`): the names
 * and element types are those of the page's template.
 * @template {Record<string, Element | RadioNodeList>} Controls
 * @typedef {HTMLFormElement & { elements: HTMLFormControlsCollection & Controls }} FormWith
 */

/**
 * A budget form (a user's quota, a group's limits): cpu, memory, gpus, notebooks, disk.
 * @typedef {FormWith<{
 *   cpu: HTMLInputElement, memory: HTMLInputElement, gpus: HTMLInputElement, notebooks: HTMLInputElement,
 *   disk: HTMLInputElement
 * }>} LimitsForm
 */

// The portal's forms are sent by its scripts (fetch), never by the browser. Those with
// neither `action` nor `method` (every script-driven form; a `method="dialog"` form closes
// its dialog, a `method="post"` one is a real post) would otherwise go out as a GET with
// their fields in the address, and in browser history and server logs (a class list with
// its passwords), when submitted before the page's script has attached its handler. While
// a page is still loading its parts (`holdForms()` ... `formsReady()`), such a submit is
// held and sent again once they are ready, so the click is not lost either.
/** @type {Map<HTMLFormElement, HTMLElement | null> | null} */
let heldForms = null;
document.addEventListener(
  'submit',
  event => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || form.hasAttribute('action') || form.hasAttribute('method')) {
      return;
    }
    event.preventDefault();
    if (heldForms) {
      event.stopImmediatePropagation();
      heldForms.set(form, /** @type {SubmitEvent} */ (event).submitter);
    }
  },
  true
);

/** The page is loading the parts that handle its forms: hold their submits until `formsReady()`. */
export function holdForms() {
  heldForms ??= new Map();
}

/** The page's forms have their handlers: send what was submitted meanwhile. */
export function formsReady() {
  const held = heldForms;
  heldForms = null;
  for (const [form, submitter] of held ?? []) {
    if (form.isConnected) form.requestSubmit(submitter ?? undefined);
  }
}

/** @typedef {import('../../../../src/apiSchema').components['schemas']['LimitsOut']} Limits */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['UsageOut']} Usage */

/**
 * One event of a start, stop, resize or build, as the .../events streams send it
 * (cgu_lab/controller/progress.py); `operation` is "status" when nothing is under way.
 * @typedef {{
 *   operation: string, percent: number, message: string, state: string, done: boolean,
 *   ok?: boolean | null, url?: string | null
 * }} ProgressEvent
 */

const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {any} body the API's ErrorBody ({message, code}) or whatever else came back
   */
  constructor(status, body) {
    super(body?.message || `request failed (${status})`);
    this.status = status;
    this.body = body;
  }
}

/**
 * Call the API; the answer's JSON, or an ApiError with the refusal's message.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body] sent as JSON
 * @returns {Promise<any>} callers say which schema they expect (see src/apiSchema.d.ts)
 */
export async function api(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin' };
  if (method !== 'GET') {
    headers['X-CSRF-Token'] = csrf;
  }
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
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

/**
 * An element with attributes (`onclick`-style keys add listeners, `dataset` fills
 * data-*) and children; text is always a text node, never parsed as HTML.
 * @param {string} tag
 * @param {Record<string, any>} [attrs] null, undefined and false leave an attribute out
 * @param {...any} children nodes, text, or (nested) lists of them; null and false are skipped
 * @returns {HTMLElement}
 */
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

/**
 * @param {HTMLElement} tbody
 * @param {Node[]} rows
 * @param {string} emptyText shown in one row across `columns` when there are no rows
 * @param {number} columns
 */
export function replaceRows(tbody, rows, emptyText, columns) {
  tbody.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: columns }, emptyText))]));
}

/**
 * @param {string} message
 * @param {string} [kind] info, error...: the status box's class
 */
export function showStatus(message, kind = 'info') {
  const box = document.getElementById('status');
  box.textContent = message;
  box.className = `status ${kind}`;
  box.hidden = false;
}

/**
 * @param {string} id the error box's id
 * @param {{ message?: string } | string | null} error an Error (its message), or text; null hides the box
 */
export function showError(id, error) {
  const box = document.getElementById(id);
  if (!error) {
    box.hidden = true;
    box.textContent = '';
    return;
  }
  box.textContent = (typeof error === 'object' && error.message) || String(error);
  box.hidden = false;
}

const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/**
 * A byte count as people read it, the one way every portal page writes sizes (and the
 * lab extension's formatBytes writes them): under 1 KiB in bytes ("18 B"), then binary
 * units with one decimal ("1.5 KiB", "800.0 MiB", "2.0 GiB"). A fixed decimal keeps a
 * column of sizes aligned and never shows "0.0176 KiB".
 * @param {number} bytes
 */
export function formatBytes(bytes) {
  if (Math.abs(bytes) < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${BYTE_UNITS[unit]}`;
}

/**
 * A memory or disk limit or amount: formatBytes, and "no limit" for none.
 * @param {number | null | undefined} bytes
 */
export function formatMemory(bytes) {
  if (bytes === null || bytes === undefined) return 'no limit';
  return formatBytes(bytes);
}

/**
 * A byte amount as a limits form takes it back unchanged: the largest unit that divides
 * it exactly ("8Gi", "1536Mi"), else bytes. Display rounds (formatBytes); a form that
 * rounded would change the limit each time it is saved again.
 * @param {number} bytes
 */
function exactMemory(bytes) {
  for (const [suffix, size] of /** @type {[string, number][]} */ ([
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10]
  ])) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${suffix}`;
  }
  return String(bytes);
}

/** @param {number | null | undefined} milli thousandths of a CPU */
export function formatCpu(milli) {
  if (milli === null || milli === undefined) return 'no limit';
  const cores = milli / 1000;
  return `${+cores.toPrecision(3)} CPU${cores === 1 ? '' : 's'}`;
}

/** @param {Record<string, number> | null | undefined} gpus a count per GPU type; null: any */
export function formatGpus(gpus) {
  if (gpus === null || gpus === undefined) return 'any GPUs';
  const parts = Object.entries(gpus).map(([type, count]) => `${count}× ${type}`);
  return parts.length ? parts.join(', ') : 'no GPUs';
}

/**
 * GPU limits as typed in a quota: "standard=1, premium=2". Empty means no GPU at all (a
 * type not listed allows none, as the README and core/quota.py say); "any" means no limit.
 */
/**
 * @param {string} text
 * @returns {Record<string, number> | null}
 */
export function parseGpus(text) {
  const trimmed = text.trim();
  if (!trimmed) return {};
  if (trimmed.toLowerCase() === 'any') return null;
  /** @type {Record<string, number>} */
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

/** @param {Record<string, number> | null | undefined} gpus */
export function gpusText(gpus) {
  if (gpus === null || gpus === undefined) return 'any';
  return Object.entries(gpus)
    .map(([t, c]) => `${t}=${c}`)
    .join(', ');
}

const pad2 = (/** @type {number} */ n) => String(n).padStart(2, '0');

/**
 * A moment as every portal page writes it: the browser's local time, "2026-12-06 14:05".
 * One fixed shape (not toLocaleString's, which varies by browser and locale and carries
 * seconds) so that a date reads the same on the course, Users and every other page.
 * @param {string | number | Date | null | undefined} value an ISO moment, milliseconds or a Date
 */
export function formatDate(value) {
  if (value === null || value === undefined || value === '') return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '—';
  return localDateTimeValue(date).replace('T', ' ');
}

/**
 * A moment as a datetime-local input takes it, in the browser's time zone: "2026-12-06T14:05".
 * @param {Date} date
 */
export function localDateTimeValue(date) {
  return (
    `${date.getFullYear()}-${pad2(date.getMonth() + 1)}-${pad2(date.getDate())}` +
    `T${pad2(date.getHours())}:${pad2(date.getMinutes())}`
  );
}

/**
 * "3 minutes ago", "2 days ago" (or "—" for never): how long since `value`.
 * @param {string | null | undefined} value an ISO moment
 * @param {string} [never]
 */
export function formatAgo(value, never = '—') {
  if (!value) return never;
  const seconds = Math.max(0, (Date.now() - new Date(value).getTime()) / 1000);
  /** @type {[number, string, number][]} limit, unit, its size, all in seconds */
  const steps = [
    [60, 'second', 1],
    [3600, 'minute', 60],
    [86400, 'hour', 3600],
    [86400 * 30, 'day', 86400],
    [86400 * 365, 'month', 86400 * 30],
    [Infinity, 'year', 86400 * 365]
  ];
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
/** @type {Record<string, (value: number) => string>} */
const DETAIL_FORMATS = { memory: formatMemory, cpu_milli: formatCpu };

/**
 * @param {unknown} value
 * @param {string} [key]
 * @returns {string | Node | Node[]}
 */
function detailValue(value, key = '') {
  if (value === null || value === undefined) return el('span', { class: 'hint' }, 'none');
  if (typeof value === 'number' && DETAIL_FORMATS[key]) return DETAIL_FORMATS[key](value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' && ISO_MOMENT.test(value)) {
    return el('time', { datetime: value }, formatDate(value));
  }
  if (Array.isArray(value)) {
    if (!value.length) return el('span', { class: 'hint' }, 'none');
    if (value.every(v => v === null || typeof v !== 'object')) {
      return value.map(v => (v === null ? 'none' : String(v))).join(', ');
    }
    return el(
      'ul',
      {},
      value.map(v => el('li', {}, detailValue(v)))
    );
  }
  if (typeof value === 'object') return renderDetails(value);
  return String(value);
}

/**
 * A changed field as the log stores it, [old, new]: "old → new".
 * @param {unknown[]} pair
 */
function change(pair) {
  const [before, after] = pair.map(v => (v === null || v === '' ? 'none' : String(v)));
  return [el('span', { class: 'change-old' }, before), ' → ', el('span', {}, after)];
}

/**
 * An audit event's details as a readable list (never raw JSON): one term per key,
 * lists joined, times in local time, a change ({"role": ["student", "ta"]}) as old → new.
 * @param {unknown} details
 * @returns {string | HTMLElement}
 */
export function renderDetails(details) {
  if (!details || typeof details !== 'object') return details ? String(details) : '';
  const entries = Object.entries(details).filter(([, value]) => value !== null && value !== undefined);
  if (!entries.length) return '';
  return el(
    'dl',
    { class: 'details' },
    entries.flatMap(([key, value]) => {
      const label = key === 'cpu_milli' ? 'cpu' : key.replaceAll('_', ' ');
      if (key === 'changes' && value && typeof value === 'object' && !Array.isArray(value)) {
        return Object.entries(value).flatMap(([field, pair]) => [
          el('dt', {}, field.replaceAll('_', ' ')),
          el('dd', {}, Array.isArray(pair) && pair.length === 2 ? change(pair) : detailValue(pair))
        ]);
      }
      return [el('dt', {}, label), el('dd', {}, detailValue(value, key))];
    })
  );
}

/**
 * A <time> element for "when did this last happen": the moment as formatDate writes it
 * (the same as every other date on the pages), how long ago as its title.
 * @param {string | null | undefined} value an ISO moment
 * @param {string} [never]
 */
export function timeAgo(value, never = 'never') {
  if (!value) return el('span', { class: 'hint' }, never);
  return el('time', { datetime: value, title: formatAgo(value, never) }, formatDate(value));
}

/**
 * The budget a limits form asks for, as PUT .../quota takes it.
 * @param {HTMLFormElement} form
 */
export function limitsFromForm(form) {
  const data = new FormData(form);
  const value = (/** @type {string} */ name) => (data.get(name) ?? '').toString().trim();
  return {
    cpu: value('cpu') || null,
    memory: value('memory') || null,
    gpus: parseGpus(value('gpus')),
    notebooks: value('notebooks') === '' ? null : Number(value('notebooks')),
    disk: value('disk') || null
  };
}

/**
 * @param {LimitsForm} form
 * @param {Limits | null | undefined} limits
 */
export function fillLimitsForm(form, limits) {
  form.elements.cpu.value = limits?.cpu_milli != null ? String(limits.cpu_milli / 1000) : '';
  form.elements.memory.value = limits?.memory != null ? exactMemory(limits.memory) : '';
  form.elements.gpus.value = gpusText(limits?.gpus);
  form.elements.notebooks.value = String(limits?.notebooks ?? '');
  form.elements.disk.value = limits?.disk != null ? exactMemory(limits.disk) : '';
}

/** @param {Limits | null | undefined} limits */
export function describeLimits(limits) {
  if (!limits) return 'no budget';
  return [
    formatCpu(limits.cpu_milli),
    formatMemory(limits.memory),
    formatGpus(limits.gpus),
    limits.notebooks == null ? 'any number of notebooks' : `${limits.notebooks} running notebook(s)`,
    // Only the allowance: the controller does not measure homes (each notebook checks its own).
    limits.disk == null ? 'any disk' : `${formatMemory(limits.disk)} of disk`
  ].join(' · ');
}

/** @param {Usage | null | undefined} usage */
export function describeUsage(usage) {
  if (!usage) return '';
  return `${formatCpu(usage.cpu_milli)} · ${formatMemory(usage.memory)} · ${formatGpus(usage.gpus)} · ${usage.notebooks} running`;
}

/**
 * One term and its description in a <dl>.
 * @param {HTMLElement} dl
 * @param {string} term
 * @param {any} detail text or nodes, as `el` takes children
 */
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
    if (!(menu instanceof HTMLDetailsElement)) continue;
    const summary = menu.querySelector('summary');
    menu.addEventListener('keydown', event => {
      if (event.key === 'Escape' && menu.open) {
        menu.open = false;
        summary?.focus();
      }
    });
    menu.addEventListener('focusout', event => {
      const next = event.relatedTarget;
      if (menu.open && next instanceof Node && !menu.contains(next)) menu.open = false;
    });
    document.addEventListener('click', event => {
      if (menu.open && event.target instanceof Node && !menu.contains(event.target)) menu.open = false;
    });
  }
}
enhanceNavMenus();

/**
 * A dialog that resolves with the button value that closed it.
 * @param {HTMLDialogElement} dialog
 * @returns {Promise<string>}
 */
export function ask(dialog) {
  return new Promise(resolve => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue), { once: true });
    dialog.showModal();
  });
}
