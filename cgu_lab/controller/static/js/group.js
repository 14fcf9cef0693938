// @ts-check
import {
  api,
  el,
  replaceRows,
  showStatus,
  showError,
  fact,
  describeLimits,
  describeUsage,
  limitsFromForm,
  fillLimitsForm,
  ask,
  formatDate
} from './common.js';

const group = document.getElementById('group-page').dataset.group;
const base = `/api/groups/${encodeURIComponent(group)}`;
const members = document.getElementById('members');
const memberForm =
  /** @type {import('./common.js').FormWith<{ user: HTMLInputElement, manager: HTMLInputElement }>} */ (
    document.getElementById('member-form')
  );
const importForm = /** @type {HTMLFormElement} */ (document.getElementById('import-form'));
const invitationRows = document.getElementById('invitations');

// Adding an account the caller does not fully manage sends it an invitation
// (the API answers 202 with `code: "invited"`, an import lists it under
// `invited`); the group's managers see the pending ones and may withdraw them.
async function loadInvitations() {
  const pending = await api('GET', `${base}/invitations`);
  replaceRows(
    invitationRows,
    pending.map(invitation =>
      el(
        'tr',
        { dataset: { invitation: invitation.user } },
        el('th', { scope: 'row' }, invitation.user, el('div', { class: 'hint' }, invitation.display_name)),
        el('td', {}, invitation.manager ? 'manager' : 'member'),
        el('td', {}, `${formatDate(invitation.created_at)} by ${invitation.invited_by}`),
        el(
          'td',
          { class: 'actions' },
          el('button', { type: 'button', class: 'danger', onclick: () => withdraw(invitation.user) }, 'Withdraw')
        )
      )
    ),
    'No pending invitation.',
    4
  );
}

function notice(text) {
  const box = document.getElementById('member-notice');
  box.textContent = text ?? '';
  box.hidden = !text;
}

async function loadQuota() {
  const quota = await api('GET', `${base}/quota`);
  const dl = document.getElementById('group-quota');
  dl.replaceChildren();
  fact(dl, 'Budget', describeLimits(quota.limits));
  fact(dl, 'In use by members', describeUsage(quota.usage));
  return quota;
}

async function loadMembers() {
  const list = await api('GET', `${base}/members`);
  replaceRows(
    members,
    list.map(member =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, member.name, el('div', { class: 'hint' }, member.display_name)),
        el('td', {}, member.role),
        el('td', {}, member.manager ? 'yes' : 'no'),
        el(
          'td',
          { class: 'actions' },
          member.role !== 'student'
            ? el(
                'button',
                { type: 'button', onclick: () => setMember(member.name, !member.manager) },
                member.manager ? 'Make plain member' : 'Make manager'
              )
            : null,
          el('button', { type: 'button', class: 'danger', onclick: () => removeMember(member.name) }, 'Remove')
        )
      )
    ),
    'No members yet.',
    4
  );
  await loadInvitations();
}

/** PUT a member and say what happened: it took effect (200) or became an invitation (202). */
async function putMember(user, manager) {
  const result = await api('PUT', `${base}/members/${encodeURIComponent(user)}`, { manager });
  if (result?.code === 'invited') {
    notice(result.message);
  } else {
    notice(`${result?.name ?? user} is now a member of ${group}${result?.manager ? ' and manages it' : ''}.`);
  }
}

async function setMember(user, manager) {
  showError('member-error', null);
  try {
    await putMember(user, manager);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  loadMembers();
}

async function withdraw(user, report = message => showStatus(message, 'error')) {
  if (!confirm(`Withdraw the invitation of ${user} to ${group}?`)) return;
  try {
    // Its own route: it never touches a membership, even if they just accepted.
    await api('DELETE', `${base}/invitations/${encodeURIComponent(user)}`);
    showStatus(`The invitation of ${user} to ${group} was withdrawn.`);
  } catch (error) {
    report(error.message);
  }
  loadMembers();
}

async function removeMember(user) {
  if (!confirm(`Remove ${user} from ${group}?`)) return;
  try {
    await api('DELETE', `${base}/members/${encodeURIComponent(user)}`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  loadMembers();
}

memberForm.addEventListener('submit', async event => {
  event.preventDefault();
  showError('member-error', null);
  notice(null);
  try {
    await putMember(memberForm.elements.user.value.trim(), memberForm.elements.manager.checked);
    memberForm.reset();
    loadMembers();
  } catch (error) {
    showError('member-error', error);
  }
});

importForm.addEventListener('submit', async event => {
  event.preventDefault();
  showError('import-error', null);
  const file = /** @type {HTMLInputElement} */ (document.getElementById('csv-file')).files?.[0];
  const csv = file ? await file.text() : /** @type {HTMLTextAreaElement} */ (document.getElementById('csv-text')).value;
  try {
    const result = await api('POST', `${base}/import`, { csv });
    const invited = result.invited ?? [];
    replaceRows(
      document.getElementById('import-created'),
      result.created.map(c =>
        el(
          'tr',
          {},
          el('td', {}, c.name),
          el('td', {}, c.one_time_password ? el('code', {}, c.one_time_password) : '(from the file)')
        )
      ),
      'No new account.',
      2
    );
    document.getElementById('import-enrolled').textContent = result.enrolled.length
      ? result.enrolled.join(', ')
      : 'Nobody joined the group at once.';
    document.getElementById('import-invited').replaceChildren(...invited.map(name => el('li', {}, name)));
    document.getElementById('import-invited-box').hidden = !invited.length;
    document.getElementById('import-summary').textContent =
      `${result.created.length} account(s) created, ${result.enrolled.length} added to the group, ` +
      `${invited.length} invited (they join when they accept), ${result.already_members.length} already members.`;
    document.getElementById('import-result').hidden = false;
    importForm.reset();
    loadMembers();
  } catch (error) {
    showError('import-error', error);
  }
});

document.getElementById('edit-budget')?.addEventListener('click', async () => {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById('quota-dialog'));
  const form = /** @type {import('./common.js').LimitsForm} */ (document.getElementById('quota-form'));
  const quota = await api('GET', `${base}/quota`);
  fillLimitsForm(form, quota.limits);
  showError('quota-error', null);
  for (;;) {
    const choice = await ask(dialog);
    if (choice === 'cancel' || !choice) break;
    try {
      if (choice === 'reset') await api('DELETE', `${base}/quota`);
      else await api('PUT', `${base}/quota`, limitsFromForm(form));
      break;
    } catch (error) {
      showError('quota-error', error);
    }
  }
  loadQuota();
});

loadQuota();
loadMembers();
