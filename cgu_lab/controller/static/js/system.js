// @ts-check
import { api, el, replaceRows, showError, showStatus, fact, formatBytes, formatDate } from './common.js';

/** @typedef {import('./common.js').ProgressEvent} ProgressEvent */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['RecipeInfo']} RecipeInfo */

const form = /** @type {import('./common.js').FormWith<{ is_default: HTMLInputElement }>} */ (
  document.getElementById('env-form')
);
const buildForm = /** @type {import('./common.js').FormWith<{
  recipe: HTMLSelectElement, variant: HTMLSelectElement, name: HTMLInputElement, is_default: HTMLInputElement
}>} */ (document.getElementById('build-form'));
const STATE_TEXT = { building: 'building…', ready: 'ready', failed: 'failed' };
/** @type {RecipeInfo[]} */
let recipes = [];
let following = null;
/** The backend's name from /api/version ("local", "kubernetes"); local until it answers. */
let backendName = 'local';

async function loadBackend() {
  const version = await api('GET', '/api/version');
  backendName = String(version.backend.name ?? 'local');
  const dl = document.getElementById('backend');
  dl.replaceChildren();
  fact(dl, 'Version', version.version);
  for (const [key, value] of Object.entries(version.backend)) {
    if (value && typeof value === 'object') {
      // e.g. notebook origins: where notebooks live and how isolated they are
      for (const [part, text] of Object.entries(value)) fact(dl, `${key.replaceAll('_', ' ')}: ${part}`, String(text));
    } else {
      fact(dl, key.replaceAll('_', ' '), String(value));
    }
  }
}

function packagesCell(env) {
  const main = env.packages.filter(p => p.main);
  const own = env.packages.filter(p => p.own);
  if (!env.packages.length) return el('td', {}, env.recipe ? env.recipe.packages.join(', ') : '—');
  return el(
    'td',
    {},
    main.map(p => `${p.name} ${p.version}`).join(' · ') || '—',
    own.length
      ? el(
          'details',
          {},
          el('summary', { class: 'hint' }, `${own.length} packages in the environment`),
          el(
            'ul',
            { class: 'hint' },
            own.map(p => el('li', {}, `${p.name} ${p.version}`))
          )
        )
      : null
  );
}

function stateCell(env) {
  const cell = el('td', {}, el('strong', {}, STATE_TEXT[env.state] || env.state));
  if (env.message) cell.append(el('div', { class: 'hint' }, env.message));
  if (env.built_at) {
    cell.append(
      el('div', { class: 'hint' }, `built ${formatDate(env.built_at)}${env.size ? `, ${formatBytes(env.size)}` : ''}`)
    );
  }
  if (env.log_tail && env.state !== 'building') {
    cell.append(
      el(
        'details',
        {},
        el('summary', { class: 'hint' }, 'Last lines of the build log'),
        el('pre', { class: 'log-output' }, env.log_tail)
      )
    );
  }
  return cell;
}

function actionsCell(env) {
  const busy = env.state === 'building';
  return el(
    'td',
    {},
    env.recipe ? el('button', { type: 'button', disabled: busy, onclick: () => rebuild(env) }, 'Rebuild') : null,
    ' ',
    el(
      'button',
      { type: 'button', class: 'danger', disabled: busy || env.is_default, onclick: () => remove(env) },
      'Delete'
    )
  );
}

/**
 * What notebooks of `env` run on this platform's backend: the local Python prefix on
 * the local backend, the container image on Kubernetes. The other backend's half is
 * only a hint, never shown as if it were what runs.
 */
function runsCell(env) {
  const local = backendName !== 'kubernetes';
  const here = local ? env.local_prefix : env.image;
  const there = local ? env.image : env.local_prefix;
  return el(
    'td',
    {},
    here
      ? el('code', {}, here)
      : el(
          'span',
          { class: 'hint' },
          local ? 'no Python on this machine: cannot run here' : 'no image: cannot run here'
        ),
    there
      ? el(
          'div',
          { class: 'hint' },
          local ? 'image on Kubernetes: ' : 'prefix on the local backend: ',
          el('code', {}, there)
        )
      : null,
    env.arch && env.arch !== 'any' ? el('div', { class: 'hint' }, `${env.arch} nodes only`) : null
  );
}

async function loadEnvironments() {
  const environments = await api('GET', '/api/environments');
  replaceRows(
    document.getElementById('environments'),
    environments.map(env =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, env.name, el('div', { class: 'hint' }, env.display_name)),
        stateCell(env),
        packagesCell(env),
        runsCell(env),
        el('td', {}, env.is_default ? 'yes' : ''),
        actionsCell(env)
      )
    ),
    'No environments.',
    6
  );
  const building = environments.find(env => env.state === 'building');
  if (building && following !== building.name) follow(building.name);
}

function follow(name) {
  following = name;
  const box = document.getElementById('build-box');
  const bar = /** @type {HTMLProgressElement} */ (document.getElementById('build-progress'));
  const message = document.getElementById('build-message');
  const log = document.getElementById('build-log');
  box.hidden = false;
  document.getElementById('build-title').textContent = `Building ${name}`;
  log.replaceChildren();
  const source = new EventSource(`/api/environments/${encodeURIComponent(name)}/events`);
  source.onmessage = msg => {
    /** @type {ProgressEvent} */
    const event = JSON.parse(msg.data);
    bar.value = event.percent;
    bar.textContent = `${event.percent}%`;
    message.textContent = event.message;
    if (event.operation !== 'status') {
      log.append(el('li', {}, event.message));
      while (log.children.length > 300) log.firstElementChild.remove();
      log.scrollTop = log.scrollHeight;
    }
    if (event.done) {
      source.close();
      following = null;
      document.getElementById('build-title').textContent = event.ok ? `Built ${name}` : `The build of ${name} is over`;
      if (event.operation !== 'status') showStatus(event.message, event.ok ? 'info' : 'error');
      loadEnvironments();
    }
  };
  source.onerror = () => {
    source.close();
    following = null;
    setTimeout(loadEnvironments, 2000);
  };
}

async function rebuild(env) {
  if (!confirm(`Build ${env.name} again from its recipe? Notebooks cannot start in it until the build is over.`)) {
    return;
  }
  try {
    await api('POST', `/api/environments/${encodeURIComponent(env.name)}/rebuild`);
    await loadEnvironments();
    follow(env.name);
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

async function remove(env) {
  if (!confirm(`Delete the environment ${env.name}${env.recipe ? ' and its files' : ''}?`)) return;
  try {
    await api('DELETE', `/api/environments/${encodeURIComponent(env.name)}`);
    loadEnvironments();
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

function describeRecipe() {
  const recipe = recipes.find(r => r.kind === buildForm.elements.recipe.value);
  if (!recipe) return;
  const cuda = buildForm.elements.variant.value === 'cuda';
  const packages = cuda ? recipe.cuda_packages : recipe.cpu_packages;
  document.getElementById('b-recipe-packages').textContent = packages.length
    ? packages.join(', ')
    : 'Only the packages you list below.';
  buildForm.elements.name.placeholder = recipe.name || 'a name';
  buildForm.elements.name.required = !recipe.name;
}

async function loadRecipes() {
  recipes = await api('GET', '/api/environment-recipes');
  buildForm.elements.recipe.replaceChildren(...recipes.map(r => el('option', { value: r.kind }, r.title)));
  describeRecipe();
}

buildForm.elements.recipe.addEventListener('change', describeRecipe);
buildForm.elements.variant.addEventListener('change', describeRecipe);

buildForm.addEventListener('submit', async event => {
  event.preventDefault();
  const data = new FormData(buildForm);
  showError('build-error', null);
  const packages = String(data.get('packages') || '')
    .split(/[\n,]+/)
    .map(p => p.trim())
    .filter(Boolean);
  // "pandas>=2, <3" was split at its comma: join version clauses back to their package.
  const joined = [];
  for (const part of packages) {
    if (/^[<>=!~]/.test(part) && joined.length) joined[joined.length - 1] += `,${part}`;
    else joined.push(part);
  }
  try {
    const env = await api('POST', '/api/environments', {
      recipe: data.get('recipe'),
      variant: data.get('variant'),
      name: String(data.get('name') || '').trim() || null,
      display_name: String(data.get('display_name') || '').trim(),
      packages: joined,
      is_default: buildForm.elements.is_default.checked
    });
    buildForm.reset();
    describeRecipe();
    await loadEnvironments();
    if (following !== env.name) follow(env.name);
  } catch (error) {
    showError('build-error', error);
  }
});

form.addEventListener('submit', async event => {
  event.preventDefault();
  const data = new FormData(form);
  showError('env-error', null);
  try {
    await api('PUT', `/api/environments/${encodeURIComponent(String(data.get('name')))}`, {
      display_name: data.get('display_name'),
      image: data.get('image'),
      local_prefix: data.get('local_prefix'),
      arch: data.get('arch'),
      is_default: form.elements.is_default.checked
    });
    form.reset();
    loadEnvironments();
  } catch (error) {
    showError('env-error', error);
  }
});

// The environments' "Where" column depends on the backend: list them once it is known.
const backendKnown = loadBackend().catch(error => showError('env-error', error));
loadRecipes();
backendKnown.then(loadEnvironments);
