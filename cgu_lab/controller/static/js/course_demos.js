// @ts-check
// The course page's Demos: the web apps published to this course (controller/publishing/),
// with their visitor counts; a demo's owner may unpublish it here, which ends its
// visitors' access at once.
import { api, el, replaceRows, showStatus } from './common.js';

/** @param {import('./course_util.js').CourseContext} ctx */
function demoRow(ctx, d, reload) {
  const running = d.state === 'running';
  const actions = el('td', {});
  if (d.owner === ctx.me || ctx.isAdmin) {
    const unpublish = /** @type {HTMLButtonElement} */ (el('button', { type: 'button', class: 'small' }, 'Unpublish'));
    unpublish.addEventListener('click', async () => {
      unpublish.disabled = true;
      try {
        await api(
          'DELETE',
          `/api/notebooks/${encodeURIComponent(d.owner)}/${encodeURIComponent(d.notebook)}/demos/${d.id}`
        );
        showStatus(`“${d.title}” is no longer published.`);
        await reload();
      } catch (error) {
        showStatus(error.message, 'error');
        unpublish.disabled = false;
      }
    });
    actions.append(unpublish);
  }
  return el(
    'tr',
    { dataset: { demo: d.id } },
    el(
      'th',
      { scope: 'row' },
      el('a', { href: d.url, target: '_blank', rel: 'noopener' }, d.title),
      running ? null : el('span', { class: 'badge warn' }, 'not running'),
      d.public ? el('span', { class: 'badge', title: 'used without a log-in too' }, 'public') : null
    ),
    el('td', {}, `${d.owner_display_name}'s ${d.notebook}`),
    el('td', {}, String(d.visitors)),
    actions
  );
}

/** @param {import('./course_util.js').CourseContext} ctx */
export async function init(ctx) {
  const body = /** @type {HTMLTableSectionElement} */ (document.getElementById('course-demos'));
  const reload = async () => {
    try {
      const demos = await api('GET', `${ctx.base}/demos`);
      replaceRows(
        body,
        demos.map(d => demoRow(ctx, d, reload)),
        'No demo is published to this course.',
        4
      );
    } catch (error) {
      showStatus(error.message, 'error');
    }
  };
  await reload();
}
