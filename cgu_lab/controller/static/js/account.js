// @ts-check
import {
  api,
  el,
  replaceRows,
  showStatus,
  showError,
  formatDate,
  fact,
  describeLimits,
  describeUsage
} from './common.js';

const passwordForm = /** @type {HTMLFormElement} */ (document.getElementById('password-form'));
passwordForm.addEventListener('submit', async event => {
  event.preventDefault();
  const data = new FormData(passwordForm);
  showError('password-error', null);
  if (data.get('new') !== data.get('repeat')) {
    showError('password-error', new Error('the two new passwords differ'));
    return;
  }
  // Hashing the password takes the server a moment: say so, and take no second click.
  const button = /** @type {HTMLButtonElement} */ (passwordForm.querySelector('button[type="submit"]'));
  const label = button.textContent;
  button.disabled = true;
  button.textContent = 'Saving…';
  showStatus('Changing your password…');
  try {
    await api('PUT', '/api/me/password', { current: data.get('current'), new: data.get('new') });
    passwordForm.reset();
    const params = new URLSearchParams(location.search);
    const next = params.get('next');
    showStatus('Your password was changed.');
    if (next && next.startsWith('/') && !next.startsWith('//')) {
      window.location.assign(next);
      return;
    }
    if (document.querySelector('.notice[role="alert"]')) window.location.assign('/notebooks');
  } catch (error) {
    showStatus('Your password was not changed.', 'error');
    showError('password-error', error);
  } finally {
    button.disabled = false;
    button.textContent = label;
  }
});

// Invitations to join a course or group, sent by its teachers or TAs: the
// account joins only by accepting (POST), declining (DELETE) forgets them.
const invitationRows = document.getElementById('invitation-rows');

async function answerInvitation(invitation, accept) {
  const label = invitation.display_name || invitation.group;
  showError('invitations-error', null);
  if (!accept && !confirm(`Decline the invitation to ${label}? Only a new invitation can undo this.`)) return;
  try {
    const path = `/api/me/invitations/${encodeURIComponent(invitation.group)}`;
    const result = await api(accept ? 'POST' : 'DELETE', path);
    showStatus(result?.message ?? (accept ? `You joined ${label}.` : `You declined ${label}.`));
  } catch (error) {
    showError('invitations-error', error);
  }
  await loadInvitations();
}

async function loadInvitations() {
  try {
    const list = await api('GET', '/api/me/invitations');
    replaceRows(
      invitationRows,
      list.map(invitation => {
        const label = invitation.display_name || invitation.group;
        return el(
          'tr',
          { dataset: { invitation: invitation.group } },
          el(
            'th',
            { scope: 'row' },
            label,
            invitation.manager ? el('span', { class: 'badge' }, 'to manage it') : null,
            label !== invitation.group ? el('div', { class: 'hint' }, invitation.group) : null
          ),
          el('td', {}, invitation.invited_by),
          el('td', {}, formatDate(invitation.created_at)),
          el(
            'td',
            { class: 'actions' },
            el(
              'button',
              {
                type: 'button',
                class: 'primary',
                'aria-label': `Accept the invitation to ${label}`,
                onclick: () => answerInvitation(invitation, true)
              },
              'Accept'
            ),
            el(
              'button',
              {
                type: 'button',
                class: 'danger',
                'aria-label': `Decline the invitation to ${label}`,
                onclick: () => answerInvitation(invitation, false)
              },
              'Decline'
            )
          )
        );
      }),
      'No pending invitation.',
      4
    );
  } catch (error) {
    invitationRows.replaceChildren();
    showError('invitations-error', error);
  }
}

if (invitationRows) loadInvitations();

const tokens = document.getElementById('tokens');
const tokenForm = /** @type {HTMLFormElement | null} */ (document.getElementById('token-form'));

async function loadTokens() {
  const list = await api('GET', '/api/me/tokens');
  replaceRows(
    tokens,
    list.map(token =>
      el(
        'tr',
        {},
        el('td', {}, token.name),
        el('td', {}, el('code', {}, `${token.prefix}…`)),
        el('td', {}, formatDate(token.created_at)),
        el('td', {}, formatDate(token.expires_at)),
        el('td', {}, formatDate(token.last_used)),
        el(
          'td',
          {},
          el(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: async () => {
                await api('DELETE', `/api/me/tokens/${token.id}`);
                loadTokens();
              }
            },
            'Revoke'
          )
        )
      )
    ),
    'No tokens.',
    6
  );
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
