// @ts-check
import {
  api,
  el,
  replaceRows,
  showStatus,
  showError,
  describeLimits,
  describeUsage,
  limitsFromForm,
  fillLimitsForm
} from './common.js';

const form = /** @type {import('./common.js').LimitsForm} */ (document.getElementById('default-form'));

async function load() {
  const quota = await api('GET', '/api/quotas/default');
  fillLimitsForm(form, quota.limits);
  const groups = await api('GET', '/api/groups');
  const rows = await Promise.all(
    groups.map(async group => {
      const q = await api('GET', `/api/groups/${encodeURIComponent(group.name)}/quota`);
      return el(
        'tr',
        {},
        el('th', { scope: 'row' }, el('a', { href: `/admin/groups/${encodeURIComponent(group.name)}` }, group.name)),
        el('td', { class: 'small' }, describeLimits(q.limits)),
        el('td', { class: 'small' }, describeUsage(q.usage))
      );
    })
  );
  replaceRows(document.getElementById('budgets'), rows, 'No groups yet.', 3);
}

form.addEventListener('submit', async event => {
  event.preventDefault();
  showError('default-error', null);
  try {
    await api('PUT', '/api/quotas/default', limitsFromForm(form));
    showStatus('The default quota was saved.');
  } catch (error) {
    showError('default-error', error);
  }
});

load();
