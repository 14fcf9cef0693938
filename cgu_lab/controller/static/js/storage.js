// @ts-check
// The storage page: the user's own storage and their courses' shared storage, with
// no notebook running. Uploads go in chunks (8 MiB each, PUT .../upload?path&upload&offset&total),
// so a large file shows its progress and a refusal (over the allowance, read-only)
// comes with the API's sentence before much is sent; folders download as one zip.
import { api, el, replaceRows, showError, showStatus, formatBytes, formatDate } from './common.js';

/** @typedef {import('../../../../src/apiSchema').components['schemas']['AreaOut']} Area */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['FolderOut']} Folder */

const CHUNK = 8 * 2 ** 20;
const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
/** What is shown: the storage, the folder in it, and the upload under way (if any). */
const state = {
  /** @type {Area | null} */ area: null,
  path: '',
  /** @type {XMLHttpRequest | null} */ request: null,
  cancelled: false
};

/** @param {Area} area */
function base(area) {
  return `/api/storage/${area.kind}/${encodeURIComponent(area.name)}`;
}

/**
 * A fresh id for one file's upload, so two uploads of one path never mix their chunks.
 * getRandomValues, not randomUUID: the page may be served over plain HTTP on a campus LAN.
 */
function uploadId() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, byte => byte.toString(16).padStart(2, '0')).join('');
}

async function loadAreas() {
  const overview = await api('GET', '/api/storage');
  document.getElementById('storage-enforcement').textContent = `Allowances are ${overview.enforcement}.`;
  const list = document.getElementById('areas');
  list.replaceChildren(
    ...overview.areas.map((/** @type {Area} */ area) =>
      el(
        'li',
        {},
        el(
          'button',
          { type: 'button', dataset: { key: `${area.kind}/${area.name}` }, onclick: () => open(area, '') },
          area.kind === 'users' ? 'My storage' : area.title,
          area.kind === 'courses'
            ? el('span', { class: 'badge' }, area.access === 'write' ? 'you write' : 'read-only')
            : null
        )
      )
    )
  );
  const wanted = new URLSearchParams(location.search).get('area');
  const first = overview.areas.find((/** @type {Area} */ a) => `${a.kind}/${a.name}` === wanted) ?? overview.areas[0];
  await open(first, new URLSearchParams(location.search).get('path') ?? '');
}

/**
 * Show a folder of a storage.
 * @param {Area} area
 * @param {string} path
 * @param {boolean} [clear] hide the last refusal (not when refreshing after one)
 */
async function open(area, path, clear = true) {
  if (clear) showError('storage-error', null);
  /** @type {Folder} */
  let folder;
  try {
    folder = await api('GET', `${base(area)}?path=${encodeURIComponent(path)}`);
  } catch (error) {
    showError('storage-error', error);
    return;
  }
  state.area = folder.area;
  state.path = folder.path;
  history.replaceState(null, '', `?area=${area.kind}/${area.name}&path=${encodeURIComponent(folder.path)}`);
  for (const button of document.querySelectorAll('#areas button')) {
    button.setAttribute(
      'aria-current',
      String(/** @type {HTMLElement} */ (button).dataset.key === `${area.kind}/${area.name}`)
    );
  }
  document.getElementById('area').hidden = false;
  document.getElementById('area-title').textContent = area.kind === 'users' ? 'My storage' : folder.area.title;
  document.getElementById('area-access').textContent = folder.area.access === 'write' ? 'read and write' : 'read-only';
  showUse(folder);
  document.getElementById('area-mounted').textContent = `In your notebooks: ~/${folder.area.mounted_at}`;
  const settings = document.getElementById('area-settings');
  settings.hidden = !folder.area.may_configure;
  /** @type {HTMLInputElement} */ (document.getElementById('ta-write')).checked = !!folder.area.ta_write;
  document
    .getElementById('write-tools')
    .querySelectorAll('label, form')
    .forEach(node => {
      /** @type {HTMLElement} */ (node).hidden = folder.area.access !== 'write';
    });
  const zip = /** @type {HTMLAnchorElement} */ (document.getElementById('zip-here'));
  zip.href = `${base(folder.area)}/zip?path=${encodeURIComponent(folder.path || '.')}`;
  showCrumbs(folder);
  showEntries(folder);
}

/** @param {Folder} folder */
function showUse(folder) {
  const allowance = folder.area.allowance;
  const meter = /** @type {HTMLMeterElement} */ (document.getElementById('area-meter'));
  const text =
    allowance === null
      ? `${formatBytes(folder.used)} used (no allowance)`
      : `${formatBytes(folder.used)} of ${formatBytes(allowance)} used`;
  document.getElementById('area-used').textContent = text;
  meter.hidden = allowance === null;
  if (allowance) {
    meter.max = allowance;
    meter.high = allowance * 0.9;
    meter.value = Math.min(folder.used, allowance);
  }
}

/** @param {Folder} folder */
function showCrumbs(folder) {
  const parts = folder.path ? folder.path.split('/') : [];
  /** @type {Node[]} */
  const crumbs = [
    el(
      'button',
      { type: 'button', onclick: () => open(folder.area, '') },
      folder.area.kind === 'users' ? 'storage' : 'shared'
    )
  ];
  parts.forEach((part, index) => {
    const to = parts.slice(0, index + 1).join('/');
    crumbs.push(
      document.createTextNode(' / '),
      el('button', { type: 'button', onclick: () => open(folder.area, to) }, part)
    );
  });
  document.getElementById('crumbs').replaceChildren(...crumbs);
}

/** @param {Folder} folder */
function showEntries(folder) {
  const writable = folder.area.access === 'write';
  const rows = folder.entries.map(entry => {
    const path = folder.path ? `${folder.path}/${entry.name}` : entry.name;
    const name =
      entry.kind === 'folder'
        ? el('button', { type: 'button', class: 'link-like', onclick: () => open(folder.area, path) }, `${entry.name}/`)
        : entry.kind === 'link'
          ? el('span', { title: 'a symbolic link: never followed here' }, `${entry.name} ↪`)
          : entry.name;
    const zip = `${base(folder.area)}/zip?path=${encodeURIComponent(path)}`;
    return el(
      'tr',
      {},
      el('th', { scope: 'row' }, name),
      el('td', {}, entry.size === null ? '—' : formatBytes(entry.size)),
      el('td', {}, formatDate(new Date(entry.modified * 1000).toISOString())),
      el(
        'td',
        { class: 'actions' },
        entry.kind === 'link' ? null : el('a', { class: 'button', href: zip, download: '' }, 'Download'),
        writable ? el('button', { type: 'button', class: 'danger', onclick: () => remove(path) }, 'Delete') : null
      )
    );
  });
  replaceRows(document.getElementById('entries'), rows, 'This folder is empty.', 4);
}

/** @param {string} path */
async function remove(path) {
  if (!state.area || !confirm(`Delete '${path}' and everything in it?`)) return;
  try {
    await api('DELETE', `${base(state.area)}/files?path=${encodeURIComponent(path)}`);
    await open(state.area, state.path);
  } catch (error) {
    showError('storage-error', error);
  }
}

/**
 * Send one chunk; resolves with the answer, reports bytes sent within the chunk.
 * @param {string} url
 * @param {Blob} chunk
 * @param {(sent: number) => void} onSent
 * @returns {Promise<{ received: number, done: boolean }>}
 */
function sendChunk(url, chunk, onSent) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    state.request = request;
    request.open('PUT', url);
    request.setRequestHeader('X-CSRF-Token', csrf);
    request.setRequestHeader('Content-Type', 'application/octet-stream');
    request.upload.onprogress = event => onSent(event.loaded);
    request.onload = () => {
      let body = null;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        body = { message: request.responseText };
      }
      if (request.status === 200) resolve(body);
      else reject(new Error(body?.message || `the upload failed (${request.status})`));
    };
    request.onerror = () => reject(new Error('the connection was lost during the upload; try again'));
    request.onabort = () => reject(new Error('upload cancelled'));
    request.send(chunk);
  });
}

/**
 * Upload files (with their folders, for a folder upload) into the folder shown.
 * @param {File[]} files
 */
async function upload(files) {
  if (!state.area || !files.length) return;
  const area = state.area;
  const total = files.reduce((sum, file) => sum + file.size, 0);
  const box = document.getElementById('upload-box');
  const bar = /** @type {HTMLProgressElement} */ (document.getElementById('upload-progress'));
  const text = document.getElementById('upload-text');
  const cancel = document.getElementById('upload-cancel');
  box.hidden = false;
  cancel.hidden = false;
  document.getElementById('status').hidden = true;
  bar.max = Math.max(total, 1);
  bar.value = 0;
  state.cancelled = false;
  showError('storage-error', null);
  let done = 0;
  try {
    for (const [index, file] of files.entries()) {
      const relative = file.webkitRelativePath || file.name;
      const path = state.path ? `${state.path}/${relative}` : relative;
      const url = `${base(area)}/upload?path=${encodeURIComponent(path)}&upload=${uploadId()}&total=${file.size}`;
      let offset = 0;
      do {
        const chunk = file.slice(offset, offset + CHUNK);
        const show = (/** @type {number} */ sent) => {
          bar.value = done + offset + sent;
          text.textContent = `File ${index + 1} of ${files.length}: ${relative} — ${formatBytes(done + offset + sent)} of ${formatBytes(total)}`;
        };
        show(0);
        const answer = await sendChunk(`${url}&offset=${offset}`, chunk, show);
        offset = answer.received;
        if (answer.done) break;
      } while (!state.cancelled);
      done += file.size;
    }
    bar.value = bar.max;
    text.textContent = `Uploaded ${files.length} file${files.length === 1 ? '' : 's'} (${formatBytes(total)}).`;
    showStatus(text.textContent);
  } catch (error) {
    showError('storage-error', error);
    text.textContent = 'The upload stopped.';
  } finally {
    state.request = null;
    cancel.hidden = true;
    await open(area, state.path, false);
  }
}

document.getElementById('upload-files').addEventListener('change', event => {
  const input = /** @type {HTMLInputElement} */ (event.target);
  upload([...(input.files ?? [])]).finally(() => (input.value = ''));
});
document.getElementById('upload-folder').addEventListener('change', event => {
  const input = /** @type {HTMLInputElement} */ (event.target);
  upload([...(input.files ?? [])]).finally(() => (input.value = ''));
});
document.getElementById('upload-cancel').addEventListener('click', () => {
  state.cancelled = true;
  state.request?.abort();
});
document.getElementById('new-folder').addEventListener('submit', async event => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ (document.getElementById('folder-name'));
  if (!state.area) return;
  const path = state.path ? `${state.path}/${input.value}` : input.value;
  try {
    await api('POST', `${base(state.area)}/folders`, { path });
    input.value = '';
    await open(state.area, state.path);
  } catch (error) {
    showError('storage-error', error);
  }
});
document.getElementById('ta-write').addEventListener('change', async event => {
  const box = /** @type {HTMLInputElement} */ (event.target);
  if (!state.area) return;
  try {
    await api('PUT', `/api/storage/courses/${encodeURIComponent(state.area.name)}/settings`, { ta_write: box.checked });
    showStatus(box.checked ? 'TAs may now write this course storage.' : 'Only teachers write this course storage now.');
  } catch (error) {
    box.checked = !box.checked;
    showError('storage-error', error);
  }
});

loadAreas().catch(error => showError('storage-error', error));
