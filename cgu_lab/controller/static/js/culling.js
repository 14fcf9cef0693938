// @ts-check
// Idle culler (admins): the platform's policy and each group's own.
import { api, el, replaceRows, showStatus, showError, ask } from './common.js';

/** @typedef {import('../../../../src/apiSchema').components['schemas']['CullPolicyOut']} CullPolicyOut */
/**
 * The platform's policy form and the group dialog's, alike.
 * @typedef {import('./common.js').FormWith<{
 *   enabled: HTMLInputElement, idle_minutes: HTMLInputElement, warn_minutes: HTMLInputElement,
 *   gpu_idle_percent: HTMLInputElement, max_lifetime_hours: HTMLInputElement,
 *   kernel_idle_minutes: HTMLInputElement, kernel_cull_connected: HTMLInputElement
 * }>} PolicyForm
 */

const policyForm = /** @type {PolicyForm} */ (document.getElementById('policy-form'));
const groupDialog = /** @type {HTMLDialogElement} */ (document.getElementById('group-dialog'));
const groupForm = /** @type {PolicyForm} */ (document.getElementById('group-form'));
const tbody = document.getElementById('group-policies');
let platform = null;

function number(value) {
  return +Number(value).toFixed(2);
}

/**
 * @param {PolicyForm} form
 * @param {CullPolicyOut} policy
 */
function fillForm(form, policy) {
  const f = form.elements;
  f.enabled.checked = policy.enabled;
  f.idle_minutes.value = String(policy.idle_minutes);
  f.warn_minutes.value = String(policy.warn_minutes);
  f.gpu_idle_percent.value = String(policy.gpu_idle_percent ?? '');
  f.max_lifetime_hours.value = String(policy.max_lifetime_hours ?? '');
  f.kernel_idle_minutes.value = String(policy.kernel_idle_minutes ?? '');
  f.kernel_cull_connected.checked = policy.kernel_cull_connected;
}

/** @param {PolicyForm} form */
function policyFromForm(form) {
  const f = form.elements;
  const optional = (/** @type {HTMLInputElement} */ input) => (input.value.trim() === '' ? null : Number(input.value));
  return {
    enabled: f.enabled.checked,
    idle_minutes: Number(f.idle_minutes.value),
    warn_minutes: Number(f.warn_minutes.value || 0),
    gpu_idle_percent: optional(f.gpu_idle_percent),
    max_lifetime_hours: optional(f.max_lifetime_hours),
    kernel_idle_minutes: optional(f.kernel_idle_minutes),
    kernel_cull_connected: f.kernel_cull_connected.checked
  };
}

/** How a policy treats idle kernels (whether or not it stops idle notebooks). */
function describeKernels(policy) {
  if (policy.kernel_idle_minutes == null) return 'idle kernels kept';
  const tabs = policy.kernel_cull_connected ? ', also with a tab open' : '';
  return `idle kernels shut down after ${number(policy.kernel_idle_minutes)} minutes${tabs}`;
}

function describe(policy) {
  if (!policy.enabled) return `never stopped · ${describeKernels(policy)}`;
  const parts = [
    `stopped after ${number(policy.idle_minutes)} idle minutes`,
    policy.warn_minutes ? `warned ${number(policy.warn_minutes)} minutes before` : 'no warning',
    policy.gpu_idle_percent == null ? 'GPU use ignored' : `GPU idle below ${number(policy.gpu_idle_percent)}%`,
    policy.max_lifetime_hours == null ? 'no maximum lifetime' : `at most ${number(policy.max_lifetime_hours)} hours`,
    describeKernels(policy)
  ];
  return parts.join(' · ');
}

async function editGroup(group, policy) {
  fillForm(groupForm, policy.inherited ? platform : policy);
  if (policy.inherited) groupForm.elements.enabled.checked = true;
  document.getElementById('group-title').textContent = `Idle policy of ${group.name}`;
  showError('group-error', null);
  while ((await ask(groupDialog)) === 'save') {
    try {
      await api('PUT', `/api/groups/${encodeURIComponent(group.name)}/culling`, policyFromForm(groupForm));
      showStatus(`${group.name} has its own idle policy now.`);
      break;
    } catch (error) {
      showError('group-error', error);
    }
  }
  loadGroups();
}

async function inherit(group) {
  try {
    await api('DELETE', `/api/groups/${encodeURIComponent(group.name)}/culling`);
    showStatus(`${group.name} follows the platform policy again.`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  loadGroups();
}

async function groupRow(group) {
  const policy = await api('GET', `/api/groups/${encodeURIComponent(group.name)}/culling`);
  let summary;
  if (policy.inherited) {
    summary = el('span', { class: 'hint' }, 'follows the platform policy');
  } else if (!policy.enabled) {
    summary = [el('span', { class: 'badge warn' }, 'exempt'), ` ${describe(policy)}`];
  } else {
    summary = [el('span', { class: 'badge' }, 'own policy'), ' ', describe(policy)];
  }
  return el(
    'tr',
    { dataset: { group: group.name } },
    el(
      'th',
      { scope: 'row' },
      group.name,
      el('div', { class: 'hint' }, group.display_name !== group.name ? group.display_name : null)
    ),
    el('td', { class: 'small' }, summary),
    el(
      'td',
      {},
      el(
        'div',
        { class: 'row-actions' },
        el(
          'button',
          {
            type: 'button',
            onclick: () => editGroup(group, policy),
            'aria-label': `Set the idle policy of ${group.name}`
          },
          policy.inherited ? 'Set own policy' : 'Edit'
        ),
        policy.inherited
          ? null
          : el(
              'button',
              {
                type: 'button',
                onclick: () => inherit(group),
                'aria-label': `${group.name}: use the platform policy`
              },
              'Use platform policy'
            )
      )
    )
  );
}

async function loadGroups() {
  try {
    const groups = await api('GET', '/api/groups');
    replaceRows(tbody, await Promise.all(groups.map(groupRow)), 'No groups yet.', 3);
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

async function loadPlatform() {
  platform = await api('GET', '/api/culling/policy');
  fillForm(policyForm, platform);
}

policyForm.addEventListener('submit', async event => {
  event.preventDefault();
  showError('policy-error', null);
  try {
    platform = await api('PUT', '/api/culling/policy', policyFromForm(policyForm));
    fillForm(policyForm, platform);
    showStatus(
      platform.enabled
        ? `The platform policy was saved: ${describe(platform)}.`
        : `The platform policy was saved: idle notebooks are not stopped; ${describeKernels(platform)}.`
    );
    loadGroups();
  } catch (error) {
    showError('policy-error', error);
  }
});

try {
  await loadPlatform();
} catch (error) {
  showStatus(error.message, 'error');
}
loadGroups();
