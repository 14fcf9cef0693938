// @ts-check
// The course page's TAs tab (who helps run the course) and Quotas tab (the
// course's budget, used against allowed, and each student's quota, edited in
// the shared quota dialog of _limits_dialog.html).
import {
  api,
  el,
  replaceRows,
  showError,
  showStatus,
  ask,
  describeLimits,
  describeUsage,
  fillLimitsForm,
  limitsFromForm,
  formatCpu,
  formatMemory
} from './common.js';
import { info } from './course_util.js';

/** @type {import('./course_util.js').CourseContext} */
let ctx;

// -- TAs ---------------------------------------------------------------------------

function mayDemote(member) {
  return member.name === ctx.me || ctx.isAdmin || (ctx.myRole === 'teacher' && member.role === 'ta');
}

async function setManager(user, manager) {
  if (
    !manager &&
    !confirm(
      user === ctx.me
        ? `Stop managing ${ctx.group}? Only another manager of the course or an administrator can make you one again.`
        : `Stop ${user} managing ${ctx.group}? They stay a member.`
    )
  ) {
    return;
  }
  showError('ta-error', null);
  info('ta-info', null);
  try {
    const result = await api('PUT', `${ctx.base}/members/${encodeURIComponent(user)}`, { manager });
    info(
      'ta-info',
      result?.code === 'invited'
        ? `${result.message}. They appear here as TA once they accept.`
        : manager
          ? `${user} is now a TA of ${ctx.group}.`
          : `${user} no longer manages ${ctx.group}; they stay a member.`
    );
  } catch (error) {
    showError('ta-error', error);
  }
  ctx.changed();
}

async function loadTas() {
  const [members, invitations] = await Promise.all([
    api('GET', `${ctx.base}/members`),
    api('GET', `${ctx.base}/invitations`)
  ]);
  const staff = members.filter(m => m.manager || m.role !== 'student');
  const rows = staff.map(member =>
    el(
      'tr',
      { dataset: { ta: member.name } },
      el('th', { scope: 'row' }, member.name, el('div', { class: 'hint' }, member.display_name)),
      el('td', {}, member.role),
      el('td', {}, member.manager ? (member.role === 'teacher' ? 'teacher' : 'TA') : 'member, not a TA'),
      el(
        'td',
        { class: 'actions' },
        member.manager && mayDemote(member)
          ? el(
              'button',
              { type: 'button', onclick: () => setManager(member.name, false) },
              member.name === ctx.me ? 'Step down' : 'Demote'
            )
          : null,
        !member.manager
          ? el('button', { type: 'button', onclick: () => setManager(member.name, true) }, 'Make TA')
          : null
      )
    )
  );
  for (const invitation of invitations.filter(i => i.manager)) {
    rows.push(
      el(
        'tr',
        { dataset: { ta: invitation.user } },
        el('th', { scope: 'row' }, invitation.user, el('div', { class: 'hint' }, invitation.display_name)),
        el('td', {}, '—'),
        el('td', {}, 'invited as TA; waits for their answer'),
        el('td', {})
      )
    );
  }
  replaceRows(document.getElementById('tas'), rows, 'Nobody besides the students.', 4);
}

// -- quotas --------------------------------------------------------------------------

function gpuText(gpus) {
  if (gpus == null) return 'any';
  const parts = Object.entries(gpus).map(([type, count]) => `${count}× ${type}`);
  return parts.length ? parts.join(', ') : 'none';
}

function budgetRow(label, used, allowed, over) {
  return el(
    'tr',
    {},
    el('th', { scope: 'row' }, label),
    el('td', { class: over ? 'over' : '' }, used),
    el('td', {}, allowed)
  );
}

async function loadBudget() {
  const quota = await api('GET', `${ctx.base}/quota`);
  const limits = quota.limits;
  const used = quota.usage;
  const cap = (value, max) => max != null && value > max;
  const gpusUsed = Object.values(used.gpus).reduce((a, b) => a + b, 0);
  replaceRows(
    document.getElementById('budget'),
    [
      budgetRow(
        'CPUs',
        formatCpu(used.cpu_milli),
        limits ? formatCpu(limits.cpu_milli) : 'no budget',
        cap(used.cpu_milli, limits?.cpu_milli)
      ),
      budgetRow(
        'Memory',
        formatMemory(used.memory),
        limits ? formatMemory(limits.memory) : 'no budget',
        cap(used.memory, limits?.memory)
      ),
      budgetRow('GPUs', gpusUsed ? gpuText(used.gpus) : 'none', limits ? gpuText(limits.gpus) : 'no budget', false),
      budgetRow(
        'Running notebooks',
        String(used.notebooks),
        limits ? (limits.notebooks ?? 'any number') : 'no budget',
        cap(used.notebooks, limits?.notebooks)
      )
    ],
    '',
    3
  );
  document.getElementById('budget-hint').textContent = limits
    ? 'The budget caps what notebooks charged to this course hold together, and the quotas you give its students.'
    : "This course has no budget: students' quotas you set are capped by the platform default. Administrators set budgets.";
}

/**
 * The shared quota dialog (_limits_dialog.html); true once saved or reset.
 * @param {string} title
 * @param {string} resetLabel
 * @param {import('./common.js').Limits | null} current
 * @param {(limits: ReturnType<typeof limitsFromForm>) => Promise<unknown>} save
 * @param {(() => Promise<unknown>) | null} reset null: no reset in this dialog
 */
async function editLimits(title, resetLabel, current, save, reset) {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById('quota-dialog'));
  const form = /** @type {import('./common.js').LimitsForm} */ (document.getElementById('quota-form'));
  document.getElementById('quota-title').textContent = title;
  const resetButton = document.getElementById('quota-reset');
  resetButton.textContent = resetLabel;
  resetButton.hidden = !ctx.isAdmin || !reset;
  fillLimitsForm(form, current);
  showError('quota-error', null);
  for (;;) {
    const choice = await ask(dialog);
    if (choice === 'cancel' || !choice) return false;
    try {
      if (choice === 'reset') await reset();
      else await save(limitsFromForm(form));
      return true;
    } catch (error) {
      showError('quota-error', error);
    }
  }
}

async function loadQuotas() {
  const members = (await api('GET', `${ctx.base}/members`)).filter(m => m.role === 'student' && !m.manager);
  const quotas = await Promise.all(
    members.map(m => api('GET', `/api/users/${encodeURIComponent(m.name)}/quota`).catch(error => ({ error })))
  );
  replaceRows(
    document.getElementById('quotas'),
    members.map((member, index) => {
      const quota = quotas[index];
      const path = `/api/users/${encodeURIComponent(member.name)}/quota`;
      return el(
        'tr',
        { dataset: { quota: member.name } },
        el('th', { scope: 'row' }, member.name, el('div', { class: 'hint' }, member.display_name)),
        el('td', {}, quota.error ? '—' : quota.source === 'user' ? 'their own' : 'platform default'),
        el('td', { class: 'small' }, quota.error ? quota.error.message : describeUsage(quota.usage)),
        el('td', { class: 'small' }, quota.error ? '' : describeLimits(quota.limits)),
        el(
          'td',
          { class: 'actions' },
          quota.error
            ? null
            : el(
                'button',
                {
                  type: 'button',
                  onclick: async () => {
                    const changed = await editLimits(
                      `Quota of ${member.name}`,
                      'Back to the default',
                      quota.limits,
                      limits => api('PUT', path, limits),
                      () => api('DELETE', path)
                    );
                    if (changed) {
                      showStatus(`The quota of ${member.name} was saved.`);
                      loadQuotas();
                    }
                  }
                },
                'Set quota'
              )
        )
      );
    }),
    'No students yet.',
    5
  );
}

/** @param {import('./course_util.js').CourseContext} context */
export function init(context) {
  ctx = context;
  ctx.listeners.push(loadTas, loadQuotas);
  const form = /** @type {import('./common.js').FormWith<{ user: HTMLInputElement }>} */ (
    document.getElementById('ta-form')
  );
  form.addEventListener('submit', async event => {
    event.preventDefault();
    await setManager(form.elements.user.value.trim(), true);
    form.reset();
  });
  document.getElementById('edit-budget')?.addEventListener('click', async () => {
    const quota = await api('GET', `${ctx.base}/quota`);
    const changed = await editLimits(
      `Budget of ${ctx.group}`,
      'No budget',
      quota.limits,
      limits => api('PUT', `${ctx.base}/quota`, limits),
      () => api('DELETE', `${ctx.base}/quota`)
    );
    if (changed) loadBudget();
  });
  document.getElementById('class-quota').addEventListener('click', async () => {
    // The dialog starts from the first student's quota: their own (usually the class
    // quota set last time), else the default they have now, which fits the course's cap.
    const first = document.querySelector('#quotas tr[data-quota]');
    const current = first
      ? await api('GET', `/api/users/${encodeURIComponent(first.getAttribute('data-quota'))}/quota`).catch(() => null)
      : null;
    /** @type {{ message: string, students: string[] } | null} */
    let result = null;
    const changed = await editLimits(
      `Quota of every student of ${ctx.group}`,
      'Back to the default',
      current?.limits ?? null,
      async limits => {
        result = await api('PUT', `${ctx.base}/student-quotas`, limits);
      },
      null
    );
    if (changed && result) {
      showStatus(`The quota of ${result.students.length} students was set: ${result.students.join(', ')}.`);
      loadQuotas();
    }
  });
  const request = /** @type {HTMLFormElement | null} */ (document.getElementById('budget-request-form'));
  request?.addEventListener('submit', async event => {
    event.preventDefault();
    showError('budget-request-error', null);
    const button = /** @type {HTMLButtonElement} */ (request.querySelector('button[type="submit"]'));
    button.disabled = true;
    try {
      const sent = await api('POST', `${ctx.base}/quota/requests`, {
        message: String(new FormData(request).get('message') ?? '')
      });
      request.reset();
      /** @type {HTMLDetailsElement} */ (document.getElementById('budget-request')).open = false;
      showStatus(`${sent.message[0].toUpperCase()}${sent.message.slice(1)}.`);
    } catch (error) {
      showError('budget-request-error', error);
    } finally {
      button.disabled = false;
    }
  });
  const fail = error => showStatus(error.message, 'error');
  loadTas().catch(fail);
  loadBudget().catch(fail);
  loadQuotas().catch(fail);
}
