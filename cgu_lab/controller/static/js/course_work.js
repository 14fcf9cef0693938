// @ts-check
// The course page's Templates, Lab files and Assignments tabs.
import { api, el, replaceRows, showError, showStatus, formatDate, ask } from './common.js';

/** @typedef {import('./common.js').ProgressEvent} ProgressEvent */
/**
 * @typedef {import('./common.js').FormWith<{
 *   title: HTMLInputElement, source: HTMLSelectElement, path: HTMLInputElement, destination: HTMLInputElement
 * }>} DeployForm
 */
/**
 * @typedef {import('./common.js').FormWith<{
 *   name: HTMLInputElement, title: HTMLInputElement, deadline: HTMLInputElement,
 *   allow_late: HTMLInputElement, max_bytes: HTMLInputElement
 * }>} AssignmentForm
 */

/** @type {import('./course_util.js').CourseContext} */
let ctx;

// -- templates ---------------------------------------------------------------------

async function patchTemplate(template, body, done) {
  try {
    await api('PATCH', `/api/templates/${encodeURIComponent(template.name)}`, body);
    showStatus(done);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  loadTemplates();
}

function versionText(template) {
  const v = template.latest;
  return v ? `version ${v.version}${v.label ? ` (${v.label})` : ''}, ${formatDate(v.created_at)}` : 'no version yet';
}

function templateLabel(t) {
  return t.display_name || t.name;
}

function courseTemplateActions(t) {
  const label = templateLabel(t);
  return [
    el(
      'button',
      {
        type: 'button',
        onclick: () =>
          patchTemplate(
            t,
            { visibility: 'private' },
            `${label} is no longer offered to ${ctx.group}; it stays yours, private.`
          )
      },
      'Unpublish'
    ),
    el(
      'button',
      {
        type: 'button',
        onclick: () =>
          patchTemplate(
            t,
            { retired: !t.retired },
            t.retired ? `${label} is offered again.` : `${label} is retired: no new notebooks start from it.`
          )
      },
      t.retired ? 'Restore' : 'Retire'
    )
  ];
}

function courseTemplateRow(t) {
  const editable = t.mine || ctx.isAdmin;
  return el(
    'tr',
    { dataset: { template: t.name } },
    el(
      'th',
      { scope: 'row' },
      el('a', { href: `/templates/${encodeURIComponent(t.name)}` }, templateLabel(t)),
      t.retired ? el('span', { class: 'badge warn' }, 'retired') : null
    ),
    el('td', {}, t.author || '—'),
    el('td', { class: 'small' }, versionText(t)),
    el('td', { class: 'actions' }, editable ? courseTemplateActions(t) : null)
  );
}

function myTemplateRow(t) {
  return el(
    'tr',
    { dataset: { template: t.name } },
    el('th', { scope: 'row' }, templateLabel(t)),
    el('td', {}, t.visibility === 'public' ? 'everyone' : t.visibility === 'group' ? `course ${t.group}` : 'only you'),
    el(
      'td',
      { class: 'actions' },
      el(
        'button',
        {
          type: 'button',
          class: 'primary',
          onclick: () =>
            patchTemplate(
              t,
              { visibility: 'group', group: ctx.group },
              `${templateLabel(t)} is now offered to ${ctx.group}.`
            )
        },
        'Publish to this course'
      )
    )
  );
}

async function loadTemplates() {
  const [inCourse, visible] = await Promise.all([
    api('GET', `/api/templates?group=${encodeURIComponent(ctx.group)}&retired=true`),
    api('GET', '/api/templates')
  ]);
  replaceRows(
    document.getElementById('course-templates'),
    inCourse.map(courseTemplateRow),
    'No template is published to this course yet.',
    4
  );
  const mine = visible.filter(t => t.mine && t.group !== ctx.group);
  replaceRows(
    document.getElementById('my-templates'),
    mine.map(myTemplateRow),
    'You have no other template. Make one in JupyterLab with Save as template.',
    3
  );
}

// -- lab files -----------------------------------------------------------------------

function showReport(deployment) {
  const rows = Object.entries(deployment.report || {}).map(([member, r]) =>
    el(
      'tr',
      {},
      el('th', { scope: 'row' }, member === '*' ? 'everyone' : member),
      ...(r.error
        ? [el('td', { colspan: 3, class: 'error' }, r.error)]
        : [
            el('td', {}, r.copied),
            el('td', {}, r.skipped),
            el('td', {}, r.conflicts.length ? r.conflicts.map(c => `${c.path} → ${c.saved_as}`).join('; ') : '0')
          ])
    )
  );
  replaceRows(document.getElementById('report-rows'), rows, 'No members.', 4);
  document.getElementById('report-title').textContent = `Report: ${deployment.title}`;
  ask(/** @type {HTMLDialogElement} */ (document.getElementById('report-dialog')));
}

async function loadDeployments() {
  const list = await api('GET', `${ctx.base}/deployments`);
  replaceRows(
    document.getElementById('deployments'),
    list.map(d =>
      el(
        'tr',
        { dataset: { deployment: d.id } },
        el('td', { class: 'nowrap' }, formatDate(d.created_at)),
        el('th', { scope: 'row' }, d.title, el('div', { class: 'hint' }, `→ courses/${ctx.group}/${d.destination}`)),
        el('td', { class: 'small' }, d.source),
        el('td', { class: 'small' }, `${d.state}: ${d.summary}`),
        el('td', {}, d.report ? el('button', { type: 'button', onclick: () => showReport(d) }, 'Report') : null)
      )
    ),
    'Nothing deployed yet.',
    5
  );
}

function follow(deployment) {
  const box = document.getElementById('deploy-progress');
  const bar = /** @type {HTMLProgressElement} */ (document.getElementById('deploy-bar'));
  const message = document.getElementById('deploy-message');
  box.hidden = false;
  const source = new EventSource(`/api/deployments/${deployment.id}/events`);
  source.onmessage = event => {
    /** @type {ProgressEvent} */
    const data = JSON.parse(event.data);
    bar.value = data.percent;
    message.textContent = data.message;
    if (data.done) {
      source.close();
      loadDeployments();
    }
  };
  source.onerror = () => source.close();
}

async function fillSources() {
  const [notebooks, templates] = await Promise.all([
    api('GET', `/api/notebooks?owner=${encodeURIComponent(ctx.me)}`),
    api('GET', '/api/templates')
  ]);
  document
    .getElementById('d-source')
    .replaceChildren(
      ...notebooks.map(nb => el('option', { value: `notebook:${nb.name}` }, `my notebook ${nb.name}`)),
      ...templates.map(t => el('option', { value: `template:${t.name}` }, `template ${t.display_name || t.name}`))
    );
}

// -- assignments ---------------------------------------------------------------------

async function loadAssignments() {
  const list = await api('GET', `${ctx.base}/assignments`);
  replaceRows(
    document.getElementById('assignments'),
    list.map(a =>
      el(
        'tr',
        { dataset: { assignment: a.id } },
        el('th', { scope: 'row' }, a.title || a.name, el('div', { class: 'hint' }, a.name)),
        el(
          'td',
          {},
          a.deadline ? formatDate(a.deadline) : 'none',
          el('div', { class: 'hint' }, a.open ? (a.allow_late ? 'open; late work accepted' : 'open') : 'closed')
        ),
        el('td', {}, a.students_submitted),
        el('td', { class: 'actions' }, el('a', { class: 'button', href: `/assignments/${a.id}` }, 'Open submissions'))
      )
    ),
    'No assignment yet.',
    4
  );
}

/** @param {import('./course_util.js').CourseContext} context */
export function init(context) {
  ctx = context;
  const fail = (/** @type {Error} */ error) => showStatus(error.message, 'error');
  const deployForm = /** @type {DeployForm} */ (document.getElementById('deploy-form'));
  deployForm.addEventListener('submit', async event => {
    event.preventDefault();
    showError('deploy-error', null);
    const [kind, value] = deployForm.elements.source.value.split(':');
    if (!value) {
      showError('deploy-error', new Error('choose where the files come from: one of your notebooks or a template'));
      return;
    }
    try {
      const deployment = await api('POST', `${ctx.base}/deployments`, {
        title: deployForm.elements.title.value,
        destination: deployForm.elements.destination.value,
        path: kind === 'notebook' ? deployForm.elements.path.value : '',
        notebook: kind === 'notebook' ? value : null,
        template: kind === 'template' ? value : null
      });
      follow(deployment);
      loadDeployments();
    } catch (error) {
      showError('deploy-error', error);
    }
  });
  const assignmentForm = /** @type {AssignmentForm} */ (document.getElementById('assignment-form'));
  assignmentForm.addEventListener('submit', async event => {
    event.preventDefault();
    showError('assignment-error', null);
    const local = assignmentForm.elements.deadline.value;
    try {
      await api('POST', `${ctx.base}/assignments`, {
        name: assignmentForm.elements.name.value,
        title: assignmentForm.elements.title.value,
        deadline: local ? new Date(local).toISOString() : null,
        allow_late: assignmentForm.elements.allow_late.checked,
        max_bytes: assignmentForm.elements.max_bytes.value || null
      });
      showStatus(`Assignment ${assignmentForm.elements.name.value} was created.`);
      assignmentForm.reset();
      loadAssignments();
    } catch (error) {
      showError('assignment-error', error);
    }
  });
  fillSources().catch(fail);
  loadTemplates().catch(fail);
  loadDeployments().catch(fail);
  loadAssignments().catch(fail);
}
