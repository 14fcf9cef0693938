import { api, el, formatDate } from './common.js';

const box = document.getElementById('courses');

function deadline(a) {
  if (!a.deadline) return 'no deadline';
  return `${a.open ? 'due' : 'closed since'} ${formatDate(a.deadline)}${a.allow_late ? ' (late accepted)' : ''}`;
}

const [me, courses] = await Promise.all([api('GET', '/api/me'), api('GET', '/api/courses')]);
const managed = new Set(me.groups.filter(g => g.manager).map(g => g.name));
box.replaceChildren(...(courses.length ? courses.map(course => el('section', { class: 'card', dataset: { course: course.name } },
  el('h2', {}, course.display_name || course.name),
  managed.has(course.name) || me.role === 'admin'
    ? el('p', {}, el('a', { class: 'button primary', href: `/courses/${encodeURIComponent(course.name)}` }, 'Manage this course'))
    : null,
  el('h3', {}, 'Material'),
  course.deployments.length
    ? el('ul', {}, course.deployments.map(d => el('li', {}, `${d.title} — ${d.path} (${formatDate(d.at)}, ${d.by})`,
        d.new ? el('span', { class: 'badge' }, 'new') : null)))
    : el('p', { class: 'hint' }, 'Nothing yet.'),
  course.broadcasts.length ? el('h3', {}, 'Live now') : null,
  course.broadcasts.length
    ? el('ul', {}, course.broadcasts.map(b => el('li', {}, el('a', { href: b.url }, `${b.owner_display_name || b.owner}'s ${b.notebook}`),
        b.expires_at ? ` until ${formatDate(b.expires_at)}` : '')))
    : null,
  el('h3', {}, 'Assignments'),
  course.assignments.length
    ? el('ul', {}, course.assignments.map(a => el('li', {},
        managed.has(course.name) ? el('a', { href: `/assignments/${a.id}` }, a.title) : a.title,
        ` — ${deadline(a)}; you submitted ${a.submissions} time(s)`)))
    : el('p', { class: 'hint' }, 'None yet.')
)) : [el('p', { class: 'hint' }, 'You are not in any course yet.')]));
