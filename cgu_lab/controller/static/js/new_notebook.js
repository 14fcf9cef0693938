// @ts-check
import { api, el, showError, describeLimits, describeUsage } from './common.js';

/**
 * @typedef {import('./common.js').FormWith<{
 *   name: HTMLInputElement, environment: HTMLSelectElement, kind: HTMLSelectElement, image: HTMLInputElement,
 *   cpu: HTMLInputElement, memory: HTMLInputElement, gpu_type: HTMLSelectElement, gpus: HTMLInputElement,
 *   group: HTMLSelectElement, persistent: HTMLInputElement
 * }>} CreateForm
 */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['EnvironmentDetail']} EnvironmentDetail */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['NotebookCreate']} NotebookCreate */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['PodDefaultOut']} PodDefaultOut */

const form = /** @type {CreateForm} */ (document.getElementById('create-form'));

async function main() {
  const [me, environments, gpuTypes, groups, podDefaults] = await Promise.all([
    api('GET', '/api/me'),
    api('GET', '/api/environments'),
    api('GET', '/api/gpu-types'),
    api('GET', '/api/groups'),
    api('GET', '/api/pod-defaults')
  ]);
  showEnvironments(environments);
  showPodDefaults(podDefaults);
  form.elements.gpu_type.append(
    ...gpuTypes.map(t => el('option', { value: t.name }, `${t.display_name || t.name} (${t.capacity} on the platform)`))
  );
  form.elements.group.append(...groups.map(g => el('option', { value: g.name }, g.display_name || g.name)));
  const version = await api('GET', '/api/version');
  if (version.backend.custom_images) {
    const images = await api('GET', '/api/images');
    document
      .getElementById('nb-images')
      .append(...[...images.environments, ...images.used].map(image => el('option', { value: image })));
    for (const node of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.kube-only'))) {
      node.hidden = false;
    }
    const vm = /** @type {HTMLOptionElement} */ (form.elements.kind.querySelector('option[value="vm"]'));
    vm.disabled = !version.backend.vm_notebooks;
  } else if (version.backend.vm_notebooks) {
    // The local backend's VMs (QEMU): the kind choice without the custom image.
    for (const id of ['nb-kind', 'nb-kind-label']) {
      /** @type {HTMLElement} */ (document.getElementById(id)).hidden = false;
    }
  }
  const quota = await api('GET', `/api/users/${encodeURIComponent(me.name)}/quota`);
  document.getElementById('quota-hint').textContent =
    `Your quota: ${describeLimits(quota.limits)}. In use now: ${describeUsage(quota.usage)}.`;
}

// Only a ready environment can run a notebook; the others show why they cannot.
/** @type {Record<string, string>} */
const NOT_READY = { building: 'being built', failed: 'failed to build' };

/** @param {EnvironmentDetail[]} environments */
function showEnvironments(environments) {
  const select = form.elements.environment;
  const byName = new Map(environments.map(env => [env.name, env]));
  select.replaceChildren(
    ...environments.map(env => {
      const why = NOT_READY[env.state];
      const title = env.display_name || env.name;
      return el(
        'option',
        { value: env.name, selected: env.is_default && !why, disabled: Boolean(why) },
        why ? `${title} (${why})` : title
      );
    })
  );
  const describe = () => {
    const env = byName.get(select.value);
    document.getElementById('nb-environment-packages').textContent = env ? packagesText(env) : '';
  };
  select.addEventListener('change', describe);
  describe();
}

/**
 * Kubeflow's configurations (PodDefaults) as its own notebook form offers them: a checkbox
 * each, by its description; nothing at all where there are none (most platforms).
 * @param {PodDefaultOut[]} podDefaults
 */
function showPodDefaults(podDefaults) {
  if (!podDefaults.length) return;
  document
    .getElementById('nb-pod-defaults-choices')
    .replaceChildren(
      ...podDefaults.map(choice =>
        el(
          'label',
          { class: 'check', title: choice.name },
          el('input', { type: 'checkbox', name: 'pod_defaults', value: choice.name }),
          ` ${choice.desc}`
        )
      )
    );
  for (const id of ['nb-pod-defaults', 'nb-pod-defaults-label']) {
    /** @type {HTMLElement} */ (document.getElementById(id)).hidden = false;
  }
}

/**
 * "numpy 2.1.3 · pandas 2.2.3 · … and 21 more", or the environment's description.
 * @param {EnvironmentDetail} env
 */
function packagesText(env) {
  const main = env.packages.filter(p => p.main);
  if (!main.length) return env.description || '';
  const others = env.packages.filter(p => !p.main && p.own).length;
  const listed = main.map(p => `${p.name} ${p.version}`).join(' · ');
  return others ? `${listed} · and ${others} more` : listed;
}

form.addEventListener('submit', async event => {
  event.preventDefault();
  const data = new FormData(form);
  const gpus = Number(data.get('gpus') || 0);
  // Every field is text (no file input here).
  const text = (/** @type {string} */ name) => String(data.get(name) ?? '');
  /** @type {NotebookCreate} */
  const body = {
    name: text('name').trim(),
    environment: text('environment') || null,
    cpu: text('cpu'),
    memory: text('memory'),
    gpus,
    gpu_type: gpus ? text('gpu_type') || null : null,
    group: text('group') || null,
    pod_defaults: data.getAll('pod_defaults').map(String),
    start: /** @type {HTMLButtonElement | null} */ (event.submitter)?.value === 'start'
  };
  if (form.elements.persistent) body.persistent = form.elements.persistent.checked;
  if (!form.elements.kind.hidden) {
    body.kind = /** @type {NotebookCreate['kind']} */ (form.elements.kind.value);
    body.image = form.elements.image.value.trim();
  }
  showError('create-error', null);
  try {
    const nb = await api('POST', '/api/notebooks', body);
    window.location.assign(
      body.start
        ? `/notebook/auto-start/${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.name)}?next=${encodeURIComponent(nb.url)}`
        : '/notebooks'
    );
  } catch (error) {
    showError('create-error', error);
  }
});

main();
