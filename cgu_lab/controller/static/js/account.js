import { api, el, replaceRows, showStatus, showError, formatDate, fact, describeLimits, describeUsage } from './common.js';

const passwordForm = document.getElementById('password-form');
passwordForm.addEventListener('submit', async event => {
  event.preventDefault();
  const data = new FormData(passwordForm);
  showError('password-error', null);
  if (data.get('new') !== data.get('repeat')) {
    showError('password-error', new Error('the two new passwords differ'));
    return;
  }
  try {
    await api('PUT', '/api/me/password', { current: data.get('current'), new: data.get('new') });
    passwordForm.reset();
    const params = new URLSearchParams(location.search);
    const next = params.get('next');
    if (next && next.startsWith('/') && !next.startsWith('//')) {
      window.location.assign(next);
      return;
    }
    showStatus('Your password was changed.');
    if (document.querySelector('.notice[role="alert"]')) window.location.assign('/notebooks');
  } catch (error) {
    showError('password-error', error);
  }
});

const tokens = document.getElementById('tokens');
const tokenForm = document.getElementById('token-form');

async function loadTokens() {
  const list = await api('GET', '/api/me/tokens');
  replaceRows(tokens, list.map(token => el('tr', {},
    el('td', {}, token.name),
    el('td', {}, el('code', {}, `${token.prefix}…`)),
    el('td', {}, formatDate(token.created_at)),
    el('td', {}, formatDate(token.expires_at)),
    el('td', {}, formatDate(token.last_used)),
    el('td', {}, el('button', { type: 'button', class: 'danger', onclick: async () => {
      await api('DELETE', `/api/me/tokens/${token.id}`);
      loadTokens();
    } }, 'Revoke'))
  )), 'No tokens.', 6);
}

if (tokenForm) {
  tokenForm.addEventListener('submit', async event => {
    event.preventDefault();
    const data = new FormData(tokenForm);
    try {
      const created = await api('POST', '/api/me/tokens', {
        name: data.get('name'),
        expires_in_days: data.get('expires_in_days') ? Number(data.get('expires_in_days')) : null
      });
      const box = document.getElementById('new-token');
      box.replaceChildren('Your new token (copy it now, it is not shown again): ', el('code', {}, created.token));
      box.hidden = false;
      tokenForm.reset();
      loadTokens();
    } catch (error) {
      showStatus(error.message, 'error');
    }
  });
  loadTokens();
  const me = await api('GET', '/api/me');
  const quota = await api('GET', `/api/users/${encodeURIComponent(me.name)}/quota`);
  const dl = document.getElementById('my-quota');
  fact(dl, 'Limits', describeLimits(quota.limits));
  fact(dl, 'From', quota.source === 'user' ? 'your own quota' : 'the platform default');
  fact(dl, 'In use', describeUsage(quota.usage));
}
