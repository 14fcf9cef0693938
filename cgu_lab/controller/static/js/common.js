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

export function parseGpus(text) {
  const trimmed = text.trim();
  if (!trimmed) return null;
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
  if (gpus === null || gpus === undefined) return '';
  return Object.entries(gpus).map(([t, c]) => `${t}=${c}`).join(', ');
}

export function formatDate(value) {
  if (!value) return '—';
  return new Date(value).toLocaleString();
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

/** A dialog that resolves with the button value that closed it. */
export function ask(dialog) {
  return new Promise(resolve => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue), { once: true });
    dialog.showModal();
  });
}
