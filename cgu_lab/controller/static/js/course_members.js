// @ts-check
// The course page's Members tab: the class list with last log-ins, adding and
// removing members, pending invitations, and enrolling a class from CSV (the
// one-time passwords shown once and offered as a CSV download; a refused file
// lists every wrong line).
import { api, el, replaceRows, showError, showStatus, formatDate } from './common.js';
import { info, roleInCourse, csvField, download } from './course_util.js';

/** @type {import('./course_util.js').CourseContext} */
let ctx;
let lastPasswords = [];

/** When each member was last active (their last request or notebook activity where the
 * platform records it, else their last log-in). */
async function lastActive() {
  try {
    const users = await api('GET', `/api/users?group=${encodeURIComponent(ctx.group)}`);
    return new Map(users.map(user => [user.name, user.last_activity ?? user.last_login]));
  } catch {
    return new Map(); // the list of accounts is for managers; the table still shows who is in
  }
}

async function loadMembers() {
  const [members, active] = await Promise.all([api('GET', `${ctx.base}/members`), lastActive()]);
  replaceRows(
    document.getElementById('members'),
    members.map(member =>
      el(
        'tr',
        { dataset: { member: member.name } },
        el('th', { scope: 'row' }, member.name, el('div', { class: 'hint' }, member.display_name)),
        el('td', {}, roleInCourse(member)),
        el('td', { class: 'nowrap' }, active.get(member.name) ? formatDate(active.get(member.name)) : 'never'),
        el(
          'td',
          { class: 'actions' },
          (member.role === 'student' && !member.manager) || ctx.isAdmin
            ? el('button', { type: 'button', class: 'danger', onclick: () => removeMember(member.name) }, 'Remove')
            : null
        )
      )
    ),
    'Nobody is in this course yet.',
    4
  );
  await loadInvitations();
}

async function loadInvitations() {
  const pending = await api('GET', `${ctx.base}/invitations`);
  replaceRows(
    document.getElementById('invitations'),
    pending.map(invitation =>
      el(
        'tr',
        { dataset: { invitation: invitation.user } },
        el('th', { scope: 'row' }, invitation.user, el('div', { class: 'hint' }, invitation.display_name)),
        el('td', {}, invitation.manager ? 'TA' : 'member'),
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

async function removeMember(user) {
  if (!confirm(`Remove ${user} from ${ctx.group}? Their account and files stay.`)) return;
  try {
    await api('DELETE', `${ctx.base}/members/${encodeURIComponent(user)}`);
    showStatus(`${user} left ${ctx.group}.`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  ctx.changed();
}

async function withdraw(user) {
  if (!confirm(`Withdraw the invitation of ${user} to ${ctx.group}?`)) return;
  try {
    await api('DELETE', `${ctx.base}/invitations/${encodeURIComponent(user)}`);
    showStatus(`The invitation of ${user} was withdrawn.`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  loadInvitations();
}

function showImportErrors(error) {
  const box = document.getElementById('import-errors');
  const lines = error?.body?.details?.errors;
  const list = document.getElementById('import-error-lines');
  if (!error) {
    box.hidden = true;
    list.replaceChildren();
    return;
  }
  if (error.body?.code === 'invalid_roster' && Array.isArray(lines)) {
    document.getElementById('import-errors-title').textContent =
      `Nothing was imported: ${lines.length} problem${lines.length === 1 ? '' : 's'} in the file. Fix ${lines.length === 1 ? 'it' : 'them'} and import the file again.`;
    list.replaceChildren(
      ...lines.map(problem =>
        el(
          'li',
          { dataset: { line: problem.line ?? '' } },
          problem.line == null ? el('strong', {}, 'Whole file: ') : el('strong', {}, `Line ${problem.line}: `),
          problem.reason
        )
      )
    );
  } else {
    document.getElementById('import-errors-title').textContent = `Nothing was imported: ${error.message}`;
    list.replaceChildren();
  }
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
}

function showImported(result) {
  const created = result.created ?? [];
  const invited = result.invited ?? [];
  lastPasswords = created.filter(c => c.one_time_password);
  replaceRows(
    document.getElementById('import-created'),
    created.map(c =>
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
  document.getElementById('import-created-box').hidden = !created.length;
  document.getElementById('download-passwords').hidden = !lastPasswords.length;
  document.getElementById('import-invited').replaceChildren(...invited.map(name => el('li', {}, name)));
  document.getElementById('import-invited-box').hidden = !invited.length;
  document.getElementById('import-summary').textContent =
    `Imported: ${created.length} account(s) created, ${result.enrolled.length} added to the course, ` +
    `${invited.length} invited (they join when they accept), ${result.already_members.length} already members.`;
  document.getElementById('import-result').hidden = false;
}

/** @param {import('./course_util.js').CourseContext} context */
export function init(context) {
  ctx = context;
  ctx.listeners.push(loadMembers);
  const memberForm = /** @type {import('./common.js').FormWith<{ user: HTMLInputElement }>} */ (
    document.getElementById('member-form')
  );
  memberForm.addEventListener('submit', async event => {
    event.preventDefault();
    showError('member-error', null);
    info('member-info', null);
    const user = memberForm.elements.user.value.trim();
    try {
      const result = await api('PUT', `${ctx.base}/members/${encodeURIComponent(user)}`, { manager: false });
      info('member-info', result?.code === 'invited' ? result.message : `${user} is now a member of ${ctx.group}.`);
      memberForm.reset();
      ctx.changed();
    } catch (error) {
      showError('member-error', error);
    }
  });

  const importForm =
    /** @type {import('./common.js').FormWith<{ file: HTMLInputElement, text: HTMLTextAreaElement }>} */ (
      document.getElementById('import-form')
    );
  importForm.addEventListener('submit', async event => {
    event.preventDefault();
    showImportErrors(null);
    document.getElementById('import-result').hidden = true;
    const file = importForm.elements.file.files[0];
    const csv = file ? await file.text() : importForm.elements.text.value;
    const button = /** @type {HTMLButtonElement} */ (importForm.querySelector('button[type="submit"]'));
    button.disabled = true;
    try {
      showImported(await api('POST', `${ctx.base}/import`, { csv }));
      importForm.reset();
      ctx.changed();
    } catch (error) {
      showImportErrors(error);
    } finally {
      button.disabled = false;
    }
  });

  document.getElementById('download-passwords').addEventListener('click', () => {
    const rows = [['username', 'one_time_password'], ...lastPasswords.map(c => [c.name, c.one_time_password])];
    download(`${ctx.group}-passwords.csv`, rows.map(row => row.map(csvField).join(',')).join('\r\n') + '\r\n');
  });
  loadMembers().catch(error => showStatus(error.message, 'error'));
}
