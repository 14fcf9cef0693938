import { api, el, replaceRows, showStatus, showError, formatDate, ask } from './common.js';

const group = document.getElementById('course-page').dataset.group;
const base = `/api/groups/${encodeURIComponent(group)}`;
const deployForm = document.getElementById('deploy-form');
const assignmentForm = document.getElementById('assignment-form');
const broadcastForm = document.getElementById('broadcast-form');

function showReport(deployment) {
  const rows = Object.entries(deployment.report || {}).map(([member, r]) => el('tr', {},
    el('th', { scope: 'row' }, member === '*' ? 'everyone' : member),
    ...(r.error
      ? [el('td', { colspan: 3, class: 'error' }, r.error)]
      : [el('td', {}, r.copied), el('td', {}, r.skipped),
         el('td', {}, r.conflicts.length ? r.conflicts.map(c => `${c.path} → ${c.saved_as}`).join('; ') : '0')])));
  replaceRows(document.getElementById('report-rows'), rows, 'No members.', 4);
  document.getElementById('report-title').textContent = `Report: ${deployment.title}`;
  ask(document.getElementById('report-dialog'));
}

async function loadDeployments() {
  const list = await api('GET', `${base}/deployments`);
  replaceRows(document.getElementById('deployments'), list.map(d => el('tr', { dataset: { deployment: d.id } },
    el('td', { class: 'nowrap' }, formatDate(d.created_at)),
    el('th', { scope: 'row' }, d.title, el('div', { class: 'hint' }, `→ courses/${group}/${d.destination}`)),
    el('td', { class: 'small' }, d.source),
    el('td', { class: 'small' }, `${d.state}: ${d.summary}`),
    el('td', {}, d.report ? el('button', { type: 'button', onclick: () => showReport(d) }, 'Report') : null)
  )), 'Nothing deployed yet.', 5);
}

async function loadAssignments() {
  const list = await api('GET', `${base}/assignments`);
  replaceRows(document.getElementById('assignments'), list.map(a => el('tr', {},
    el('th', { scope: 'row' }, el('a', { href: `/assignments/${a.id}` }, a.title), el('div', { class: 'hint' }, a.name)),
    el('td', {}, a.deadline ? formatDate(a.deadline) : 'none', a.allow_late ? el('div', { class: 'hint' }, 'late accepted') : null),
    el('td', {}, a.students_submitted)
  )), 'No assignment yet.', 3);
}

function follow(deployment) {
  const box = document.getElementById('deploy-progress');
  const bar = document.getElementById('deploy-bar');
  const message = document.getElementById('deploy-message');
  box.hidden = false;
  const source = new EventSource(`/api/deployments/${deployment.id}/events`);
  source.onmessage = event => {
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

deployForm.addEventListener('submit', async event => {
  event.preventDefault();
  showError('deploy-error', null);
  const [kind, value] = deployForm.elements.source.value.split(':');
  try {
    const deployment = await api('POST', `${base}/deployments`, {
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

assignmentForm.addEventListener('submit', async event => {
  event.preventDefault();
  showError('assignment-error', null);
  const local = assignmentForm.elements.deadline.value;
  try {
    await api('POST', `${base}/assignments`, {
      name: assignmentForm.elements.name.value,
      title: assignmentForm.elements.title.value,
      deadline: local ? new Date(local).toISOString() : null,
      allow_late: assignmentForm.elements.allow_late.checked,
      max_bytes: assignmentForm.elements.max_bytes.value || null
    });
    assignmentForm.reset();
    loadAssignments();
  } catch (error) {
    showError('assignment-error', error);
  }
});

broadcastForm.addEventListener('submit', async event => {
  event.preventDefault();
  showError('broadcast-error', null);
  const [owner, name] = broadcastForm.elements.notebook.value.split('/');
  try {
    const share = await api('POST', `/api/notebooks/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/broadcast`, {
      group, minutes: Number(broadcastForm.elements.minutes.value)
    });
    showStatus(`Live view started until ${formatDate(share.expires_at)}; the class finds it in its Course panel.`);
  } catch (error) {
    showError('broadcast-error', error);
  }
});

const me = await api('GET', '/api/me');
const [notebooks, templates] = await Promise.all([
  api('GET', `/api/notebooks?owner=${encodeURIComponent(me.name)}`),
  api('GET', '/api/templates')
]);
deployForm.elements.source.append(
  ...notebooks.map(nb => el('option', { value: `notebook:${nb.name}` }, `my notebook ${nb.name}`)),
  ...templates.map(t => el('option', { value: `template:${t.name}` }, `template ${t.display_name || t.name}`))
);
broadcastForm.elements.notebook.append(...notebooks.map(nb => el('option', { value: `${nb.owner}/${nb.name}` }, nb.name)));
loadDeployments();
loadAssignments();
