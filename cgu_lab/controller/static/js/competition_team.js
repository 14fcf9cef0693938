// @ts-check
// "Your team" on a competition page with teams, for a student: create a team or join one
// with the code a member gave; in a team, its members, the join code to pass on, and
// leaving (refused by the API once the team has entries, so the button says why).
import { api, el, fact, showStatus, ApiError } from './common.js';

/** @typedef {import('../../../../src/apiSchema').components['schemas']['MyTeamOut']} MyTeam */

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
function byId(id) {
  return /** @type {HTMLElement} */ (document.getElementById(id));
}

/**
 * Copy the join code; where the clipboard is refused, select it for the user to copy.
 * @param {string} code
 * @param {HTMLElement} shown
 */
async function copy(code, shown) {
  try {
    await navigator.clipboard.writeText(code);
    showStatus('Join code copied.');
  } catch {
    const range = document.createRange();
    range.selectNodeContents(shown);
    window.getSelection()?.removeAllRanges();
    window.getSelection()?.addRange(range);
    showStatus('Press Ctrl+C (⌘C) to copy the selected join code.');
  }
}

/** @param {MyTeam} team */
function showTeam(team) {
  const facts = byId('team-facts');
  facts.replaceChildren();
  fact(facts, 'Team', team.name);
  fact(facts, 'Members', `${team.members.join(', ')} (${team.members.length} of at most ${team.max_team_size})`);
  const shown = el('code', { id: 'team-code' }, team.join_code);
  fact(
    facts,
    'Join code',
    el(
      'span',
      {},
      shown,
      ' ',
      el(
        'button',
        { type: 'button', 'aria-label': 'Copy the join code', onclick: () => void copy(team.join_code, shown) },
        'Copy'
      )
    )
  );
  const leave = /** @type {HTMLButtonElement} */ (byId('team-leave'));
  leave.disabled = team.entries > 0;
  byId('team-leave-reason').textContent =
    team.entries > 0 ? 'Your team has entries, which stay the team’s: its members cannot leave it now.' : '';
}

/**
 * Load my team and show either it or the forms to create and join one.
 * @param {string} id the competition's
 */
async function load(id) {
  /** @type {MyTeam | null} */
  let team = null;
  try {
    team = await api('GET', `/api/competitions/${id}/my-team`);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
  byId('team-loading').hidden = true;
  byId('team-none').hidden = team !== null;
  byId('team-mine').hidden = team === null;
  if (team) showTeam(team);
}

/**
 * Wire the "Your team" section up, if the page has one.
 * @param {string} id the competition's
 * @param {() => Promise<void>} changed called after joining or leaving (my entries change)
 */
export async function setupTeam(id, changed) {
  if (!document.getElementById('team-section')) return;
  /**
   * @param {() => Promise<string>} action its success message
   */
  const act = async action => {
    try {
      showStatus(await action());
      await load(id);
      await changed();
    } catch (error) {
      showStatus(error.message, 'error');
    }
  };
  const createForm = /** @type {HTMLFormElement} */ (byId('team-create-form'));
  createForm.addEventListener('submit', event => {
    event.preventDefault();
    const name = /** @type {HTMLInputElement} */ (createForm.elements.namedItem('name')).value;
    void act(async () => {
      /** @type {MyTeam} */
      const team = await api('POST', `/api/competitions/${id}/my-team`, { name });
      createForm.reset();
      return `Team ${team.name} created; give its join code to your teammates.`;
    });
  });
  const joinForm = /** @type {HTMLFormElement} */ (byId('team-join-form'));
  joinForm.addEventListener('submit', event => {
    event.preventDefault();
    const code = /** @type {HTMLInputElement} */ (joinForm.elements.namedItem('code')).value.trim();
    void act(async () => {
      /** @type {MyTeam} */
      const team = await api('POST', `/api/competitions/${id}/my-team/join`, { code });
      joinForm.reset();
      return `You joined team ${team.name}.`;
    });
  });
  byId('team-leave').addEventListener('click', () => {
    void act(async () => (await api('DELETE', `/api/competitions/${id}/my-team`)).message);
  });
  try {
    await load(id);
  } catch (error) {
    byId('team-loading').textContent = error.message;
  }
}
