// @ts-check
// GPUs (admins): the GPU types on offer, and the devices they are placed on.
import { api, el, replaceRows, showStatus, showError, formatMemory, ask } from './common.js';

const typesBody = document.getElementById('gpu-types');
const devicesBody = document.getElementById('devices');
/**
 * @typedef {import('./common.js').FormWith<Record<
 *   'name' | 'display_name' | 'description' | 'resource_name' | 'share' | 'fraction' | 'mig_profile' | 'models'
 *   | 'node_selector', HTMLInputElement
 * >>} TypeForm
 */
/**
 * @typedef {import('./common.js').FormWith<Record<
 *   'device_id' | 'node' | 'model' | 'memory' | 'mig_profile' | 'index', HTMLInputElement
 * >>} DeviceForm
 */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['GpuTypeOut']} GpuTypeOut */

const typeDialog = /** @type {HTMLDialogElement} */ (document.getElementById('type-dialog'));
const typeForm = /** @type {TypeForm} */ (document.getElementById('type-form'));
const deviceForm = /** @type {DeviceForm} */ (document.getElementById('device-form'));

function selectorText(selector) {
  return Object.entries(selector || {})
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
}

function parseSelector(text) {
  const result = {};
  for (const part of text
    .split(',')
    .map(s => s.trim())
    .filter(Boolean)) {
    const at = part.indexOf('=');
    const key = at > 0 ? part.slice(0, at).trim() : '';
    if (!key) throw new Error(`write the node selector as key=value, separated by commas (not "${part}")`);
    result[key] = part.slice(at + 1).trim();
  }
  return result;
}

function kindOf(type) {
  if (type.mig_profile) return `MIG ${type.mig_profile}`;
  if (type.fraction < 1) return `MPS, ${+(type.fraction * 100).toFixed(1)}% each`;
  if (type.share > 1) return `time-sliced by ${type.share}`;
  return 'whole GPU';
}

/**
 * @param {Partial<GpuTypeOut> | null} type null: a new one
 * @param {boolean} existing whether `type` is saved already (its name is then fixed)
 */
function fillTypeForm(type, existing = Boolean(type)) {
  const f = typeForm.elements;
  f.name.value = type?.name ?? '';
  f.name.readOnly = existing;
  // Focus the first field that can change: the name of a new type, the title of an existing one.
  f.name.autofocus = !existing;
  f.display_name.autofocus = existing;
  f.display_name.value = type?.display_name ?? '';
  f.description.value = type?.description ?? '';
  f.resource_name.value = type?.resource_name ?? 'nvidia.com/gpu';
  f.share.value = String(type?.share ?? 1);
  f.fraction.value = String(type?.fraction ?? 1);
  f.mig_profile.value = type?.mig_profile ?? '';
  f.models.value = (type?.models ?? []).join(', ');
  f.node_selector.value = selectorText(type?.node_selector);
}

/** The NVIDIA resource a type of this kind asks for (the server refuses a mismatch). */
/**
 * @param {number} share
 * @param {string} migProfile
 */
function suggestedResource(share, migProfile) {
  const profile = migProfile.trim().toLowerCase();
  if (profile) return `nvidia.com/mig-${profile}`;
  return share > 1 ? 'nvidia.com/gpu.shared' : 'nvidia.com/gpu';
}

// While the resource is one of NVIDIA's own names, it follows the kind of the type.
function followKind() {
  const f = typeForm.elements;
  const current = f.resource_name.value.trim();
  if (current && !current.startsWith('nvidia.com/')) return;
  const shared = Number(f.share.value) > 1;
  let wanted = suggestedResource(Number(f.share.value), f.mig_profile.value);
  if (f.mig_profile.value.trim() && shared && current.endsWith('.shared')) wanted += '.shared';
  f.resource_name.value = wanted;
}
for (const field of /** @type {const} */ (['share', 'mig_profile'])) {
  typeForm.elements[field].addEventListener('input', followKind);
}

function typeFromForm() {
  const f = typeForm.elements;
  return {
    display_name: f.display_name.value.trim(),
    description: f.description.value.trim(),
    resource_name: f.resource_name.value.trim(),
    share: Number(f.share.value),
    fraction: Number(f.fraction.value),
    mig_profile: f.mig_profile.value.trim(),
    models: f.models.value
      .split(',')
      .map(s => s.trim())
      .filter(Boolean),
    node_selector: parseSelector(f.node_selector.value)
  };
}

/**
 * @param {Partial<GpuTypeOut> | null} type null: a new one
 * @param {boolean} existing false for a type proposed from the fleet, not saved yet
 */
async function editType(type, existing = Boolean(type)) {
  fillTypeForm(type, existing);
  document.getElementById('type-title').textContent = existing ? `Edit GPU type ${type.name}` : 'New GPU type';
  showError('type-error', null);
  while ((await ask(typeDialog)) === 'save') {
    const name = typeForm.elements.name.value.trim();
    try {
      await api('PUT', `/api/gpu-types/${encodeURIComponent(name)}`, typeFromForm());
      showStatus(`GPU type ${name} was saved.`);
      break;
    } catch (error) {
      showError('type-error', error);
    }
  }
  load();
}

async function deleteType(type) {
  if (!confirm(`Delete the GPU type "${type.name}"? Quotas that name it allow nothing of it any more.`)) return;
  try {
    const result = await api('DELETE', `/api/gpu-types/${encodeURIComponent(type.name)}`);
    showStatus(result.message);
  } catch (error) {
    // A 409 names the users whose notebooks still use the type.
    showStatus(error.message, 'error');
  }
  load();
}

async function removeDevice(device) {
  if (!confirm(`Remove the declared GPU "${device.device_id}"?`)) return;
  try {
    const result = await api('DELETE', `/api/gpus/${encodeURIComponent(device.device_id)}`);
    showStatus(result.message);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  load();
}

function typeRow(type) {
  return el(
    'tr',
    { dataset: { type: type.name } },
    el(
      'th',
      { scope: 'row' },
      type.name,
      el('div', { class: 'hint' }, type.display_name !== type.name ? type.display_name : null),
      el('div', { class: 'hint' }, type.description || null),
      el('span', { class: 'badge' }, kindOf(type))
    ),
    el('td', {}, el('code', {}, type.resource_name)),
    el('td', { class: 'num' }, type.share),
    el('td', { class: 'num' }, type.fraction),
    el('td', {}, type.mig_profile || '—'),
    el('td', {}, type.models.join(', ') || 'any'),
    el('td', {}, selectorText(type.node_selector) || '—'),
    el('td', { class: 'num' }, type.capacity),
    el(
      'td',
      {},
      el(
        'div',
        { class: 'row-actions' },
        el('button', { type: 'button', onclick: () => editType(type), 'aria-label': `Edit ${type.name}` }, 'Edit'),
        el(
          'button',
          { type: 'button', class: 'danger', onclick: () => deleteType(type), 'aria-label': `Delete ${type.name}` },
          'Delete'
        )
      )
    )
  );
}

function deviceRow(device) {
  return el(
    'tr',
    { dataset: { device: device.device_id } },
    el('th', { scope: 'row' }, el('code', {}, device.device_id), el('div', { class: 'hint' }, `index ${device.index}`)),
    el('td', {}, device.node),
    el('td', {}, device.model || '—'),
    el('td', { class: 'nowrap' }, device.memory ? formatMemory(device.memory) : '—'),
    el('td', {}, device.mig_profile || '—'),
    el('td', {}, device.declared ? el('span', { class: 'badge' }, 'declared') : 'found'),
    el('td', {}, device.holders.length ? device.holders.join(', ') : el('span', { class: 'hint' }, 'free')),
    el(
      'td',
      {},
      device.declared
        ? el(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: () => removeDevice(device),
              'aria-label': `Remove ${device.device_id}`
            },
            'Remove'
          )
        : null
    )
  );
}

const fleetSection = document.getElementById('fleet');
const fleetBody = document.getElementById('fleet-products');

function sliceText(product) {
  const parts = [];
  if (product.whole) parts.push(`${product.whole} whole`);
  if (product.slices) parts.push(`${product.slices} time-slices (${product.replicas} per GPU)`);
  for (const [profile, count] of Object.entries(product.mig)) parts.push(`${count}× MIG ${profile}`);
  return parts.join(', ') || 'none allocatable';
}

// One click fills the type form from a proposal (resource name, node selector, models);
// the admin reviews it and saves.
function productRow(product) {
  return el(
    'tr',
    { dataset: { product: product.product } },
    el(
      'th',
      { scope: 'row' },
      el('code', {}, product.product),
      el('div', { class: 'hint' }, product.memory_mib ? formatMemory(product.memory_mib * 2 ** 20) : null),
      ...product.notes.map(note => el('div', { class: 'hint' }, note))
    ),
    el('td', {}, product.archs.join(', ') || '—'),
    el(
      'td',
      { class: 'num' },
      String(product.nodes.length),
      product.unschedulable.length
        ? el('div', { class: 'hint' }, `${product.unschedulable.length} not taking pods (cordoned or not ready)`)
        : null
    ),
    el('td', { class: 'num' }, product.gpus),
    el('td', {}, sliceText(product)),
    el('td', {}, product.existing_types.join(', ') || '—'),
    el(
      'td',
      {},
      el(
        'div',
        { class: 'row-actions' },
        ...product.proposals.map(proposal =>
          el(
            'button',
            {
              type: 'button',
              onclick: () => editType({ ...proposal, description: '', fraction: 1 }, false),
              'aria-label': `Make a GPU type of ${proposal.display_name}`
            },
            `Make a type: ${proposal.display_name}`
          )
        )
      )
    )
  );
}

async function loadFleet() {
  // Only a cluster has nodes to read products from; elsewhere the API would answer 501.
  if (fleetSection.dataset.backend !== 'kubernetes') return;
  try {
    const fleet = await api('GET', '/api/gpus/fleet');
    fleetSection.hidden = false;
    replaceRows(fleetBody, fleet.products.map(productRow), 'No node carries GPU Feature Discovery labels.', 7);
  } catch {
    // 501 on a backend without nodes: the section stays hidden.
    fleetSection.hidden = true;
  }
}

async function load() {
  loadFleet();
  try {
    const [types, devices] = await Promise.all([api('GET', '/api/gpu-types'), api('GET', '/api/gpus')]);
    replaceRows(typesBody, types.map(typeRow), 'No GPU types yet: add one so students can ask for GPUs.', 9);
    replaceRows(devicesBody, devices.map(deviceRow), 'No GPU found and none declared.', 8);
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

document.getElementById('add-type').addEventListener('click', () => editType(null));

deviceForm.addEventListener('submit', async event => {
  event.preventDefault();
  const f = deviceForm.elements;
  showError('device-error', null);
  try {
    const result = await api('POST', '/api/gpus', {
      device_id: f.device_id.value.trim(),
      node: f.node.value.trim() || null,
      model: f.model.value.trim(),
      memory: f.memory.value.trim() || 0,
      mig_profile: f.mig_profile.value.trim(),
      index: Number(f.index.value || 0)
    });
    showStatus(result.message);
    deviceForm.reset();
    load();
  } catch (error) {
    showError('device-error', error);
  }
});

load();
