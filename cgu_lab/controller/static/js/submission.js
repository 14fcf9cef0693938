// @ts-check
import { api, el, replaceRows, fact, formatDate, formatMemory } from './common.js';
import { openSubmission } from './open_submission.js';

const page = document.getElementById('submission-page');
const id = page.dataset.submission;
const s = await api('GET', `/api/submissions/${id}`);
document.getElementById('submission-title').textContent = `${s.assignment}: ${s.student}, submission #${s.number}`;
const facts = document.getElementById('submission-facts');
fact(facts, 'Submitted', formatDate(s.submitted_at) + (s.late ? ' (late)' : ''));
fact(facts, 'Files', `${s.files}, ${formatMemory(s.bytes)}`);
fact(facts, 'Content hash (SHA-256)', s.content_hash);
fact(facts, 'Environment', s.environment);
if (s.note) fact(facts, 'Note', s.note);
replaceRows(
  document.getElementById('submission-files'),
  (s.manifest || []).map(f =>
    el(
      'tr',
      {},
      el('th', { scope: 'row' }, f.path),
      el('td', {}, formatMemory(f.size)),
      el('td', {}, el('code', {}, f.sha256.slice(0, 16)))
    )
  ),
  'No files.',
  3
);
const openButton = /** @type {HTMLButtonElement | null} */ (document.getElementById('open-submission'));
openButton?.addEventListener('click', () => openSubmission(id, `${s.student}'s submission #${s.number}`, openButton));
