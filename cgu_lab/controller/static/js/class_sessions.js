// @ts-check
// Class sessions on the pages: the course page's tab (book, who is in, capacity held,
// cancel), the monitoring page's bookings ahead and the student's upcoming sessions on
// My notebooks (Open: their pre-warmed notebook). One module: one way to show a session.
import {
  api,
  el,
  formatCpu,
  formatDate,
  formatGpus,
  formatMemory,
  replaceRows,
  showError,
  showStatus
} from './common.js';

/** What a session holds in all, in words: "8 CPUs, 16 GiB, 4 × half". */
export function heldText(session) {
  const held = session.held;
  const parts = [formatCpu(held.cpu_milli), formatMemory(held.memory)];
  if (Object.keys(held.gpus).length) parts.push(formatGpus(held.gpus));
  return `${parts.join(', ')} for ${session.seats} seat${session.seats === 1 ? '' : 's'}`;
}

/** "2027-03-01 09:00 – 10:30" (the browser's time). */
export function whenText(session) {
  return `${formatDate(session.starts_at)} – ${formatDate(session.ends_at).slice(11)}`;
}

const PHASES = {
  booked: 'booked',
  warming: 'pre-warming',
  running: 'in session',
  ended: 'ended',
  cancelled: 'cancelled'
};

function phaseCell(session) {
  return el(
    'td',
    {},
    el(
      'span',
      { class: `state state-${session.phase === 'running' ? 'running' : 'pending'}` },
      PHASES[session.phase] ?? session.phase
    )
  );
}

function peopleCell(session) {
  const inside = session.people.filter(p => p.in).map(p => p.student);
  const outside = session.people.filter(p => !p.in);
  return el(
    'td',
    { dataset: { sessionIn: String(session.in) } },
    `${session.in} in`,
    inside.length ? el('div', { class: 'hint' }, inside.join(', ')) : null,
    outside.length ? el('div', { class: 'hint' }, `not in: ${outside.map(p => p.student).join(', ')}`) : null
  );
}

// -- the course page's tab -------------------------------------------------------------

/** @param {import('./course_util.js').CourseContext} ctx */
export function initCourse(ctx) {
  const base = `/api/courses/${encodeURIComponent(ctx.group)}/sessions`;
  const form = /** @type {HTMLFormElement} */ (document.getElementById('session-form'));
  const start = /** @type {HTMLInputElement} */ (document.getElementById('session-start'));

  async function cancel(session) {
    if (!confirm(`Cancel "${session.title}"? Its capacity is freed at once.`)) return;
    try {
      await api('POST', `${base}/${session.id}/cancel`);
      showStatus(`"${session.title}" is cancelled.`);
    } catch (error) {
      showError('session-error', error);
    }
    load();
  }

  function row(session) {
    return el(
      'tr',
      { dataset: { session: String(session.id), phase: session.phase } },
      el('th', { scope: 'row' }, session.title, el('div', { class: 'hint' }, `booked by ${session.booked_by}`)),
      el(
        'td',
        {},
        whenText(session),
        el('div', { class: 'hint' }, `pre-warm ${session.prewarm_minutes} min, grace ${session.grace_minutes} min`)
      ),
      el('td', {}, `${session.template ?? '—'} v${session.template_version ?? ''}`),
      el(
        'td',
        {},
        heldText(session),
        el('div', { class: 'hint' }, session.held.now ? 'held now' : `held from ${formatDate(session.holds_from)}`)
      ),
      peopleCell(session),
      phaseCell(session),
      el(
        'td',
        { class: 'actions' },
        ['booked', 'warming', 'running'].includes(session.phase)
          ? el(
              'button',
              { type: 'button', dataset: { sessionCancel: String(session.id) }, onclick: () => cancel(session) },
              'Cancel'
            )
          : null
      )
    );
  }

  async function load() {
    try {
      const answer = await api('GET', base);
      replaceRows(document.getElementById('sessions'), answer.sessions.map(row), 'No class sessions booked.', 7);
    } catch (error) {
      showError('session-error', error);
    }
  }

  async function templates() {
    const select = document.getElementById('session-template');
    const rows = await api('GET', `/api/templates?group=${encodeURIComponent(ctx.group)}`);
    const all = rows.length ? rows : await api('GET', '/api/templates');
    select.replaceChildren(...all.map(t => el('option', { value: t.name }, t.display_name || t.name)));
  }

  form.addEventListener('submit', async event => {
    event.preventDefault();
    showError('session-error', null);
    const data = new FormData(form);
    const starts = new Date(String(data.get('starts')));
    const ends = new Date(starts.getTime() + Number(data.get('length')) * 60_000);
    const body = {
      title: String(data.get('title') ?? ''),
      template: String(data.get('template') ?? ''),
      starts_at: starts.toISOString(),
      ends_at: ends.toISOString(),
      prewarm_minutes: Number(data.get('prewarm')),
      grace_minutes: Number(data.get('grace'))
    };
    if (data.get('seats')) body.seats = Number(data.get('seats'));
    try {
      const booked = await api('POST', base, body);
      showStatus(`Booked "${booked.title}": ${heldText(booked)}.`);
    } catch (error) {
      showError('session-error', error);
    }
    load();
  });
  document.getElementById('sessions-refresh').addEventListener('click', load);
  const soon = new Date(Date.now() + 24 * 3600_000);
  soon.setMinutes(0);
  start.value = `${soon.getFullYear()}-${String(soon.getMonth() + 1).padStart(2, '0')}-${String(soon.getDate()).padStart(2, '0')}T${String(soon.getHours()).padStart(2, '0')}:00`;
  templates().catch(error => showError('session-error', error));
  return {
    /** @param {boolean} visible whether the tab is on screen */
    visible(visible) {
      if (visible) load();
    }
  };
}

// -- the monitoring page: bookings ahead --------------------------------------------------

export async function initAhead() {
  const tbody = document.getElementById('bookings-ahead');
  if (!tbody) return;
  try {
    const sessions = await api('GET', '/api/class-sessions/ahead');
    const rows = sessions.map(session =>
      el(
        'tr',
        { dataset: { session: String(session.id) } },
        el(
          'th',
          { scope: 'row' },
          el('a', { href: `/courses/${encodeURIComponent(session.course)}#sessions` }, session.course)
        ),
        el('td', {}, session.title),
        el('td', {}, whenText(session)),
        el('td', {}, heldText(session)),
        peopleCell(session),
        phaseCell(session)
      )
    );
    replaceRows(tbody, rows, 'No class session is booked ahead.', 6);
  } catch (error) {
    showError('bookings-error', error);
  }
}

// -- My notebooks: my upcoming sessions --------------------------------------------------------

async function openMine(session) {
  // Opened in the click itself, so that no pop-up blocker stops it.
  const tab = window.open('', '_blank');
  try {
    const mine = await api('POST', `/api/courses/${encodeURIComponent(session.course)}/sessions/${session.id}/open`);
    if (tab) {
      tab.opener = null;
      tab.location.href = mine.url;
    } else {
      window.open(mine.url, '_blank', 'noopener');
    }
  } catch (error) {
    tab?.close();
    showError('my-sessions-error', error);
  }
}

export async function initMine() {
  const tbody = document.getElementById('my-sessions');
  if (!tbody) return;
  try {
    const sessions = await api('GET', '/api/class-sessions/mine');
    const section = document.getElementById('my-sessions-section');
    section.hidden = sessions.length === 0;
    const rows = sessions.map(session => {
      const seat = session.people[0];
      return el(
        'tr',
        { dataset: { session: String(session.id) } },
        el('th', { scope: 'row' }, session.title, el('div', { class: 'hint' }, session.course)),
        el('td', {}, whenText(session)),
        el(
          'td',
          {},
          seat?.notebook ? `${seat.notebook} (${seat.state})` : `pre-warmed ${session.prewarm_minutes} min before`
        ),
        el(
          'td',
          { class: 'actions' },
          seat?.notebook
            ? el(
                'button',
                {
                  type: 'button',
                  class: 'primary',
                  dataset: { sessionOpen: String(session.id) },
                  onclick: () => openMine(session)
                },
                'Open'
              )
            : null
        )
      );
    });
    replaceRows(tbody, rows, 'No class session ahead.', 4);
  } catch (error) {
    showError('my-sessions-error', error);
  }
}
