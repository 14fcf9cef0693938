// @ts-check
/**
 * The notebooks page: links that open a notebook's apps (the Linux desktop, VS Code, the
 * environment's own), in the same tab. What each environment offers is read once from
 * /api/environments; rows drawn before it arrived get their links on the page's next refresh.
 *
 * Each link goes through the notebook's start page, which goes straight on when the notebook
 * runs and otherwise starts it (showing its progress) and then goes on: VS Code and the web apps
 * land on their own page below the notebook (`<notebook>/<app>/`, jupyter-server-proxy's
 * address), never on JupyterLab first; the desktop opens in JupyterLab, in a tab of its own
 * there (`?cgu-app=`, src/apps/plugin.ts), and so does the browser, as a window on it.
 */
import { api, el } from './common.js';

/** @typedef {import('../../../../src/apiSchema').components['schemas']['EnvironmentDetail']} Environment */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['NotebookOut']} NotebookOut */

/** The apps that open inside JupyterLab rather than on a page of their own (the browser is a
 * window on the desktop). */
const IN_LAB = ['desktop', 'browser'];

/** @type {Map<string, {name: string, title: string}[]>} */
const offered = new Map();

api('GET', '/api/environments')
  .then((/** @type {Environment[]} */ list) => {
    for (const env of list) offered.set(env.name, env.apps);
  })
  .catch(() => undefined); // no links: the launcher inside the notebook still lists the apps

/**
 * Where an app of a notebook opens: its start page, going on to the app once it runs.
 * @param {{owner: string, name: string}} nb
 * @param {string} app
 */
export function appHref(nb, app) {
  const where = `${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.name)}`;
  const next = IN_LAB.includes(app)
    ? `/notebook/${where}/lab?cgu-app=${encodeURIComponent(app)}`
    : `/notebook/${where}/${encodeURIComponent(app)}/`;
  return `/notebook/auto-start/${where}?${new URLSearchParams({ next, start: '1' })}`;
}

/**
 * The app links of one notebook row: a running notebook's, and a stopped one's (which start it).
 * @param {NotebookOut} nb
 */
export function appLinks(nb) {
  const apps = offered.get(nb.environment) ?? [];
  if (!['running', 'stopped'].includes(nb.state) || apps.length === 0) return null;
  const starts = nb.state === 'stopped';
  return el(
    'span',
    { class: 'app-links' },
    ...apps.map(app =>
      el(
        'a',
        {
          class: 'button',
          href: appHref(nb, app.name),
          'data-app': app.name,
          title: starts ? `Start the notebook and open ${app.title}` : `Open ${app.title}`
        },
        app.title
      )
    )
  );
}
