// @ts-check
import { api, el, replaceRows, showError, describeLimits } from './common.js';

const tbody = document.getElementById('groups');
// Only for those who may create groups.
const form = /** @type {HTMLFormElement | null} */ (document.getElementById('group-form'));

async function refresh() {
  const groups = await api('GET', '/api/groups');
  const rows = await Promise.all(
    groups.map(async group => {
      const quota = await api('GET', `/api/groups/${encodeURIComponent(group.name)}/quota`);
      return el(
        'tr',
        {},
        el(
          'th',
          { scope: 'row' },
          el('a', { href: `/admin/groups/${encodeURIComponent(group.name)}` }, group.name),
          el('div', { class: 'hint' }, group.display_name)
        ),
        el('td', {}, group.kind),
        el('td', {}, group.members),
        el('td', { class: 'small' }, describeLimits(quota.limits))
      );
    })
  );
  replaceRows(tbody, rows, 'No groups yet.', 4);
}

form?.addEventListener('submit', async event => {
  event.preventDefault();
  const data = new FormData(form);
  showError('group-error', null);
  try {
    await api('POST', '/api/groups', {
      name: data.get('name'),
      display_name: data.get('display_name'),
      kind: data.get('kind')
    });
    form.reset();
    refresh();
  } catch (error) {
    showError('group-error', error);
  }
});

refresh();
