// @ts-check
import { api, el, replaceRows, showStatus, fact, formatDate, formatMemory } from './common.js';

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
document.getElementById('open-submission')?.addEventListener('click', async () => {
  try {
    const nb = await api('POST', `/api/submissions/${id}/open`);
    window.location.assign(
      `/notebook/auto-start/${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.name)}?next=${encodeURIComponent(nb.url)}`
    );
  } catch (error) {
    showStatus(error.message, 'error');
  }
});
