// @ts-check
/**
 * The notebooks page's Publish: a notebook's owner (a teacher, TA or admin) publishes one of
 * its web apps as a demo (controller/publishing/): an app its environment declares, or a port
 * it serves on. A notebook shown as a page with Voilà is published from JupyterLab ("Publish
 * as a Demo…"), where the notebook's server makes the page an app it runs itself, again after
 * every restart (notebook/apps/voila_demos.py); the dialog says so. The dialog lists
 * the notebook's demos with their address and visitor count, and unpublishes them (which
 * ends their visitors' access at once); an administrator also makes a demo public (used
 * without a log-in) or not. Courses list their demos on the course page (course_demos.js).
 */
import { api, ask, el, showError, showStatus } from './common.js';

/** @typedef {import('../../../../src/apiSchema').components['schemas']['NotebookOut']} NotebookOut */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['EnvironmentDetail']} Environment */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['UserOut']} UserOut */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['DemoOut']} Demo */

const PORT = 'port';

/** @type {{role: string, courses: string[], declared: Map<string, {name: string, title: string}[]>}} */
const who = { role: 'student', courses: [], declared: new Map() };

/**
 * What the dialog needs to know once: the user's role, the courses they may publish to (those
 * they teach; every course for an administrator) and the apps each environment declares
 * (built-in apps, which have no command, are never published).
 * @param {UserOut} me
 */
export async function initDemos(me) {
  who.role = me.role;
  if (!['admin', 'teacher', 'ta'].includes(me.role)) return;
  who.courses =
    me.role === 'admin'
      ? (await api('GET', '/api/groups')).map((/** @type {{name: string}} */ g) => g.name)
      : (me.groups ?? []).filter(g => g.manager).map(g => g.name);
  try {
    for (const env of /** @type {Environment[]} */ (await api('GET', '/api/environments'))) {
      who.declared.set(
        env.name,
        env.apps.filter(app => app.command.length > 0)
      );
    }
  } catch {
    // no declared apps offered: a port still is
  }
}

/** @param {NotebookOut} nb */
function demosPath(nb) {
  return `/api/notebooks/${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.name)}/demos`;
}

/**
 * The Publish button of a notebook row: for its owner when they may publish at all, and for
 * administrators (who also make demos public).
 * @param {NotebookOut} nb
 * @param {boolean} mine
 */
export function publishButton(nb, mine) {
  if (!(who.role === 'admin' || (mine && ['teacher', 'ta'].includes(who.role)))) return null;
  return el(
    'button',
    {
      type: 'button',
      'data-demos': `${nb.owner}/${nb.name}`,
      title: 'Publish one of its web apps as a demo for a course, and see its visitors',
      onclick: () => openDemos(nb)
    },
    'Publish'
  );
}

/**
 * One row of the notebook's demos.
 * @param {NotebookOut} nb
 * @param {Demo} d
 * @param {() => Promise<void>} reload
 */
function demoRow(nb, d, reload) {
  const unpublish = /** @type {HTMLButtonElement} */ (
    el('button', { type: 'button', class: 'small', 'data-unpublish': d.app }, 'Unpublish')
  );
  unpublish.addEventListener('click', async () => {
    unpublish.disabled = true;
    try {
      await api('DELETE', `${demosPath(nb)}/${d.id}`);
      showStatus(`“${d.title}” is no longer published.`);
    } catch (error) {
      showError('demos-error', error);
    }
    await reload();
  });
  let toggle = null;
  if (who.role === 'admin') {
    toggle = el(
      'button',
      {
        type: 'button',
        class: 'toggle small',
        'aria-pressed': String(d.public),
        'data-public': d.app,
        title: 'A public demo is used without a log-in (its app only, paced per address)',
        onclick: async () => {
          try {
            await api('PUT', `${demosPath(nb)}/${d.id}/public`, { public: !d.public });
          } catch (error) {
            showError('demos-error', error);
          }
          await reload();
        }
      },
      'Public'
    );
  }
  const audience = d.public ? 'anyone (public)' : (d.course ?? 'everyone logged in');
  return el(
    'tr',
    { dataset: { demo: d.app } },
    el('th', { scope: 'row' }, d.title, el('div', { class: 'hint' }, d.app)),
    el('td', {}, audience),
    el('td', {}, el('a', { href: d.url, target: '_blank', rel: 'noopener', 'data-demo-url': d.app }, d.url)),
    el(
      'td',
      { 'data-visitors': d.app },
      String(d.visitors),
      d.anonymous_visitors ? el('div', { class: 'hint' }, `${d.anonymous_visitors} without a log-in`) : null
    ),
    el('td', { class: 'actions' }, toggle, unpublish)
  );
}

/**
 * The app choice, and the port's row that goes with it.
 * @param {NotebookOut} nb
 */
function fillChoices(nb) {
  const app = /** @type {HTMLSelectElement} */ (document.getElementById('demo-app'));
  const audience = /** @type {HTMLSelectElement} */ (document.getElementById('demo-audience'));
  app.replaceChildren(
    ...(who.declared.get(nb.environment) ?? []).map(a => el('option', { value: `${a.name}/` }, a.title)),
    el('option', { value: PORT }, 'A port it serves on (an http.server, Streamlit, …)')
  );
  app.value = PORT;
  audience.replaceChildren(
    ...who.courses.map(c => el('option', { value: c }, `course ${c}`)),
    el('option', { value: '' }, 'everyone logged in')
  );
  showChoice();
}

function showChoice() {
  const app = /** @type {HTMLSelectElement} */ (document.getElementById('demo-app')).value;
  /** @type {HTMLElement} */ (document.getElementById('demo-port-row')).hidden = app !== PORT;
}

/** @param {NotebookOut} nb */
async function openDemos(nb) {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById('demos-dialog'));
  const list = /** @type {HTMLElement} */ (document.getElementById('demos-list'));
  const app = /** @type {HTMLSelectElement} */ (document.getElementById('demo-app'));
  const port = /** @type {HTMLInputElement} */ (document.getElementById('demo-port'));
  const title = /** @type {HTMLInputElement} */ (document.getElementById('demo-title'));
  const audience = /** @type {HTMLSelectElement} */ (document.getElementById('demo-audience'));
  document.getElementById('demos-title').textContent = `Demos of ${nb.name}`;
  const reload = async () => {
    try {
      /** @type {Demo[]} */
      const demos = await api('GET', demosPath(nb));
      list.replaceChildren(
        ...(demos.length
          ? demos.map(d => demoRow(nb, d, reload))
          : [el('tr', {}, el('td', { colspan: 5 }, 'Nothing of this notebook is published.'))])
      );
    } catch (error) {
      showError('demos-error', error);
    }
  };
  fillChoices(nb);
  showError('demos-error', null);
  app.onchange = showChoice;
  await reload();
  while ((await ask(dialog)) === 'publish') {
    let chosen = app.value;
    if (chosen === PORT) chosen = `proxy/${port.value}/`;
    const body = { app: chosen, course: audience.value || null, title: title.value.trim() };
    try {
      await api('POST', demosPath(nb), body);
      showStatus(`${nb.name}: ${body.title || chosen} is published.`);
      showError('demos-error', null);
      title.value = '';
    } catch (error) {
      showError('demos-error', error);
    }
    await reload();
  }
}
