// @ts-check
// The course page as its students see it: read-only templates, assignments,
// their own submissions, and the lab files and live views given to the class (each
// with Copy to my home).
import { api, el, replaceRows, formatDate, showStatus } from './common.js';

function deadline(a) {
  if (!a.deadline) return 'no deadline';
  return `${a.open ? 'due' : 'closed since'} ${formatDate(a.deadline)}${a.allow_late ? ' (late work accepted)' : ''}`;
}

function listOrEmpty(list, items, emptyText) {
  list.replaceChildren(...(items.length ? items : [el('li', { class: 'hint' }, emptyText)]));
}

function templateItem(t) {
  return el(
    'li',
    { dataset: { template: t.name } },
    el('a', { href: `/templates/${encodeURIComponent(t.name)}` }, t.display_name || t.name),
    t.description ? el('div', { class: 'hint' }, t.description) : null
  );
}

function assignmentRow(a) {
  return el(
    'tr',
    { dataset: { assignment: a.id } },
    el('th', { scope: 'row' }, a.title || a.name),
    el('td', {}, deadline(a)),
    el('td', {}, a.submissions ? `${a.submissions}, last ${formatDate(a.last_submitted_at)}` : 'none yet')
  );
}

function submissionRow(s) {
  return el(
    'tr',
    {},
    el('th', { scope: 'row' }, s.assignment, el('div', { class: 'hint' }, `#${s.number}`)),
    el('td', {}, formatDate(s.submitted_at), s.late ? el('span', { class: 'badge warn' }, 'late') : null),
    el('td', {}, s.files),
    el('td', {}, el('a', { href: s.url }, 'Receipt'))
  );
}

function deploymentItem(d) {
  return el(
    'li',
    {},
    `${d.title}: ${d.path} (${formatDate(d.at)}, ${d.by})`,
    d.new ? el('span', { class: 'badge' }, 'new') : null
  );
}

// Copy to my home: the live view's files into the student's notebook used last (the
// controller picks it), to keep and run after the live view ends.
async function copyBroadcast(group, b, button) {
  button.disabled = true;
  try {
    const copied = await api('POST', `/api/groups/${encodeURIComponent(group)}/broadcasts/${b.id}/copy`, {});
    const kept = copied.conflicts.length
      ? `; ${copied.conflicts.length} file(s) you had were kept, copies beside them`
      : '';
    showStatus(`Copied ${copied.copied} file(s) into ${copied.folder}/ of your notebook ${copied.notebook}${kept}.`);
  } catch (error) {
    showStatus(error.message, 'error');
  } finally {
    button.disabled = false;
  }
}

function broadcastItem(group, b) {
  const copy = el('button', { type: 'button', class: 'small' }, 'Copy to my home');
  copy.addEventListener('click', () => copyBroadcast(group, b, copy));
  return el(
    'li',
    { dataset: { broadcast: b.id } },
    'Live now: ',
    el('a', { href: b.url }, `${b.owner_display_name || b.owner}'s ${b.notebook}`),
    b.expires_at ? ` until ${formatDate(b.expires_at)} ` : ' ',
    copy
  );
}

export async function init(ctx) {
  try {
    const [templates, courses, submissions] = await Promise.all([
      api('GET', `/api/templates?group=${encodeURIComponent(ctx.group)}`),
      api('GET', '/api/courses'),
      api('GET', `${ctx.base}/submissions/mine`)
    ]);
    const course = courses.find(c => c.name === ctx.group) ?? { assignments: [], deployments: [], broadcasts: [] };
    listOrEmpty(
      document.getElementById('student-templates'),
      templates.map(templateItem),
      'No template for this course yet.'
    );
    replaceRows(
      document.getElementById('student-assignments'),
      course.assignments.map(assignmentRow),
      'No assignment yet.',
      3
    );
    replaceRows(
      document.getElementById('student-submissions'),
      submissions.map(submissionRow),
      'You have not submitted anything to this course yet.',
      4
    );
    listOrEmpty(
      document.getElementById('student-material'),
      [...course.deployments.map(deploymentItem), ...course.broadcasts.map(b => broadcastItem(ctx.group, b))],
      'Nothing yet.'
    );
  } catch (error) {
    showStatus(error.message, 'error');
  }
}
