// @ts-check
import { api, el, replaceRows, fact, formatDate, formatMemory } from './common.js';

import { openSubmission } from './open_submission.js';

const id = document.getElementById('assignment-page').dataset.assignment;

const data = await api('GET', `/api/assignments/${id}/submissions`);
const a = data.assignment;
document.getElementById('assignment-title').textContent = `${a.title} (${a.group})`;
const facts = document.getElementById('assignment-facts');
fact(facts, 'Deadline', a.deadline ? formatDate(a.deadline) : 'none');
fact(facts, 'Late submissions', a.allow_late ? 'accepted, marked late' : 'refused');
fact(facts, 'Students who submitted', String(new Set(data.submissions.map(s => s.student)).size));
replaceRows(
  document.getElementById('submissions'),
  data.submissions.map(s =>
    el(
      'tr',
      { dataset: { submission: s.id } },
      el(
        'th',
        { scope: 'row' },
        el('a', { href: s.url }, s.display_name || s.student),
        el('div', { class: 'hint' }, s.student)
      ),
      el('td', {}, s.number),
      el('td', {}, formatDate(s.submitted_at), s.late ? el('span', { class: 'badge warn' }, 'late') : null),
      el('td', {}, `${s.files} (${formatMemory(s.bytes)})`),
      el('td', {}, el('code', { title: s.content_hash }, s.content_hash.slice(0, 12))),
      el(
        'td',
        {},
        el(
          'button',
          {
            type: 'button',
            onclick: (/** @type {MouseEvent} */ event) =>
              openSubmission(
                s.id,
                `${s.student}'s submission #${s.number}`,
                /** @type {HTMLButtonElement} */ (event.currentTarget)
              )
          },
          'Open as notebook'
        )
      )
    )
  ),
  'Nobody submitted yet.',
  6
);
