// @ts-check
/**
 * The notebooks page: links that open a running notebook's apps (the Linux desktop, VS Code,
 * the environment's own) in its JupyterLab, which opens the app named by `?cgu-app=`
 * (src/apps/plugin.ts). What each environment offers is read once from /api/environments;
 * rows drawn before it arrived get their links on the page's next refresh.
 */
import { api, el } from './common.js';

/** @typedef {import('../../../../src/apiSchema').components['schemas']['EnvironmentDetail']} Environment */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['NotebookOut']} NotebookOut */

/** @type {Map<string, {name: string, title: string}[]>} */
const offered = new Map();

api('GET', '/api/environments')
  .then((/** @type {Environment[]} */ list) => {
    for (const env of list) offered.set(env.name, env.apps);
  })
  .catch(() => undefined); // no links: the launcher inside the notebook still lists the apps

/**
 * The app links of one notebook row (none for a notebook that is not running).
 * @param {NotebookOut} nb
 */
export function appLinks(nb) {
  const apps = offered.get(nb.environment) ?? [];
  if (nb.state !== 'running' || apps.length === 0) return null;
  return el(
    'span',
    { class: 'app-links' },
    ...apps.map(app =>
      el(
        'a',
        { class: 'button', href: `${nb.url}?cgu-app=${encodeURIComponent(app.name)}`, title: `Open ${app.title}` },
        app.title
      )
    )
  );
}
