// @ts-check
/**
 * System page: the apps an environment's notebooks offer (PUT /api/environments/{name}/apps).
 * The built-ins are checkboxes, the database a choice of one engine (a notebook has at most
 * one: the server refuses two); an administrator's own apps are a JSON list, checked by the
 * server, whose refusal names what to fix.
 */
import { api, el, showError, showStatus } from './common.js';

/** @typedef {import('../../../../src/apiSchema').components['schemas']['EnvironmentDetail']} Environment */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['AppOut']} App */

/** @typedef {'desktop' | 'vscode' | 'browser' | 'rstudio'} BuiltIn */
/** @type {BuiltIn[]} */
const BUILT_IN = ['desktop', 'vscode', 'browser', 'rstudio'];
/** The database apps, of which an environment offers one or none. */
const DATABASES = ['postgres', 'mariadb'];
const form =
  /** @type {import('./common.js').FormWith<{
   *   environment: HTMLSelectElement, use_default: HTMLInputElement, desktop: HTMLInputElement,
   *   vscode: HTMLInputElement, database: RadioNodeList, browser: HTMLInputElement,
   *   rstudio: HTMLInputElement, own: HTMLTextAreaElement }>} */ (document.getElementById('apps-form'));
/** @type {Map<string, Environment>} */
const environments = new Map();

/** Show the chosen environment's apps in the form. */
function show() {
  const env = environments.get(form.elements.environment.value);
  if (!env) return;
  const names = env.apps.map(app => app.name);
  form.elements.use_default.checked = !env.apps_declared;
  for (const builtIn of BUILT_IN) form.elements[builtIn].checked = names.includes(builtIn);
  form.elements.database.value = names.find(name => DATABASES.includes(name)) ?? '';
  /** @type {readonly string[]} */
  const builtIns = [...BUILT_IN, ...DATABASES];
  const own = env.apps.filter(app => !builtIns.includes(app.name));
  form.elements.own.value = own.length ? JSON.stringify(own.map(ownApp), null, 1) : '';
  enable();
}

/** @param {App} app */
function ownApp(app) {
  /** @type {Record<string, unknown>} */
  const out = { name: app.name, title: app.title, command: app.command };
  if (app.port) out.port = app.port;
  if (app.icon) out.icon = app.icon;
  return out;
}

function enable() {
  const declared = !form.elements.use_default.checked;
  const radios = /** @type {HTMLInputElement[]} */ ([...form.elements.database]);
  for (const input of [...BUILT_IN.map(builtIn => form.elements[builtIn]), ...radios, form.elements.own]) {
    input.disabled = !declared;
  }
}

async function load() {
  /** @type {Environment[]} */
  const list = await api('GET', '/api/environments');
  const chosen = form.elements.environment.value;
  environments.clear();
  form.elements.environment.replaceChildren(
    ...list.map(env => {
      environments.set(env.name, env);
      return el('option', { value: env.name }, env.display_name || env.name);
    })
  );
  if (chosen && environments.has(chosen)) form.elements.environment.value = chosen;
  show();
}

form.elements.environment.addEventListener('change', show);
form.elements.use_default.addEventListener('change', enable);
form.addEventListener('submit', async event => {
  event.preventDefault();
  showError('apps-error', null);
  const name = form.elements.environment.value;
  /** @type {unknown[] | null} */
  let apps = null;
  if (!form.elements.use_default.checked) {
    /** @type {string[]} */
    const names = BUILT_IN.filter(builtIn => form.elements[builtIn].checked);
    const database = form.elements.database.value;
    // After the desktop and VS Code, as the recipes list it (the launcher's order).
    const before = names.filter(app => app === 'desktop' || app === 'vscode').length;
    if (database) names.splice(before, 0, database);
    apps = names.map(app => ({ name: app }));
    const text = form.elements.own.value.trim();
    if (text) {
      try {
        const own = JSON.parse(text);
        apps.push(...(Array.isArray(own) ? own : [own]));
      } catch (error) {
        showError('apps-error', new Error(`Own apps are not valid JSON: ${/** @type {Error} */ (error).message}`));
        return;
      }
    }
  }
  try {
    await api('PUT', `/api/environments/${encodeURIComponent(name)}/apps`, { apps });
    showStatus(`Apps of ${name} saved; notebooks started from now on offer them.`);
    await load();
  } catch (error) {
    showError('apps-error', error);
  }
});

load();
