// @ts-check
import { api, el, formatDate, showError } from './common.js';

const box = /** @type {HTMLElement} */ (document.getElementById('courses'));
// Only for those who may create courses.
const form =
  /** @type {import('./common.js').FormWith<{ name: HTMLInputElement, display_name: HTMLInputElement }> | null} */ (
    document.getElementById('new-course-form')
  );

function deadline(a) {
  if (!a.deadline) return 'no deadline';
  return `${a.open ? 'due' : 'closed since'} ${formatDate(a.deadline)}${a.allow_late ? ' (late accepted)' : ''}`;
}

const coursePath = name => `/courses/${encodeURIComponent(name)}`;

form?.addEventListener('submit', async event => {
  event.preventDefault();
  showError('new-course-error', null);
  try {
    const course = await api('POST', '/api/groups', {
      name: form.elements.name.value.trim(),
      display_name: form.elements.display_name.value.trim(),
      kind: 'course'
    });
    window.location.assign(coursePath(course.name));
  } catch (error) {
    showError('new-course-error', error);
  }
});

const [me, courses] = await Promise.all([api('GET', '/api/me'), api('GET', '/api/courses')]);
const managed = new Set(me.groups.filter(g => g.manager).map(g => g.name));
const manages = name => managed.has(name) || me.role === 'admin';
const cards = courses.map(course =>
  el(
    'section',
    { class: 'card', dataset: { course: course.name } },
    el('h2', {}, el('a', { href: coursePath(course.name) }, course.display_name || course.name)),
    el(
      'p',
      {},
      el(
        'a',
        { class: manages(course.name) ? 'button primary' : 'button', href: coursePath(course.name) },
        manages(course.name) ? 'Manage this course' : 'Open the course page'
      )
    ),
    el('h3', {}, 'Material'),
    course.deployments.length
      ? el(
          'ul',
          {},
          course.deployments.map(d =>
            el(
              'li',
              {},
              `${d.title} — ${d.path} (${formatDate(d.at)}, ${d.by})`,
              d.new ? el('span', { class: 'badge' }, 'new') : null
            )
          )
        )
      : el('p', { class: 'hint' }, 'Nothing yet.'),
    course.broadcasts.length ? el('h3', {}, 'Live now') : null,
    course.broadcasts.length
      ? el(
          'ul',
          {},
          course.broadcasts.map(b =>
            el(
              'li',
              {},
              el('a', { href: b.url }, `${b.owner_display_name || b.owner}'s ${b.notebook}`),
              b.expires_at ? ` until ${formatDate(b.expires_at)}` : ''
            )
          )
        )
      : null,
    el('h3', {}, 'Assignments'),
    course.assignments.length
      ? el(
          'ul',
          {},
          course.assignments.map(a =>
            el(
              'li',
              {},
              managed.has(course.name) ? el('a', { href: `/assignments/${a.id}` }, a.title) : a.title,
              ` — ${deadline(a)}; you submitted ${a.submissions} time(s)`
            )
          )
        )
      : el('p', { class: 'hint' }, 'None yet.')
  )
);
if (me.role === 'admin') {
  // Administrators run every course, including those they are not in.
  const mine = new Set(courses.map(c => c.name));
  const others = (await api('GET', '/api/groups')).filter(g => g.kind === 'course' && !mine.has(g.name));
  if (others.length) {
    cards.push(
      el(
        'section',
        { class: 'card', 'aria-labelledby': 'other-courses' },
        el('h2', { id: 'other-courses' }, 'Other courses'),
        el(
          'ul',
          {},
          others.map(g =>
            el(
              'li',
              { dataset: { course: g.name } },
              el('a', { href: coursePath(g.name) }, g.display_name || g.name),
              ` — ${g.members} member(s)`
            )
          )
        )
      )
    );
  }
}
box.replaceChildren(
  ...(cards.length
    ? cards
    : [
        el(
          'p',
          { class: 'hint' },
          me.role === 'teacher' ? 'You run no course yet: create one above.' : 'You are not in any course yet.'
        )
      ])
);
