// @ts-check
// The course page's TAs tab: a teacher (or an admin) creates a TA for the course in
// one step. The controller makes the account and its membership; its one-time
// password is shown here once, as the class import shows its passwords.
import { api, el, showError } from './common.js';

/** @param {import('./course_util.js').CourseContext} ctx */
export function init(ctx) {
  const form = /** @type {import('./common.js').FormWith<{
    name: HTMLInputElement, display_name: HTMLInputElement, email: HTMLInputElement
  }> | null} */ (document.getElementById('new-ta-form'));
  if (!form) return; // a TA's page: only the course's teacher and admins add TAs
  const box = /** @type {HTMLElement} */ (document.getElementById('new-ta-info'));
  const button = /** @type {HTMLButtonElement} */ (form.querySelector('button[type="submit"]'));
  form.addEventListener('submit', async event => {
    event.preventDefault();
    showError('new-ta-error', null);
    box.hidden = true;
    button.disabled = true;
    try {
      const added = await api('POST', `${ctx.base}/tas`, {
        name: form.elements.name.value.trim(),
        display_name: form.elements.display_name.value.trim(),
        email: form.elements.email.value.trim()
      });
      box.replaceChildren(`${added.message}.`);
      if (added.one_time_password) {
        box.append(
          ' One-time password (shown only now; give it to them, they choose their own at first login): ',
          el('code', { id: 'new-ta-password' }, added.one_time_password)
        );
      }
      box.hidden = false;
      form.reset();
      ctx.changed();
    } catch (error) {
      showError('new-ta-error', error);
    } finally {
      button.disabled = false;
    }
  });
}
