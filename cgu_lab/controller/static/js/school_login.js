// @ts-check
// The System page's school logins: the configured providers (with the redirect URI to
// register) and the administrator's rules mapping claims and LDAP groups to roles and courses.
import { api, el, replaceRows, showError } from './common.js';

const form = /** @type {HTMLFormElement} */ (document.getElementById('school-rule-form'));

/** @param {Record<string, any>} rule */
function describe(rule) {
  return rule.source === 'claim'
    ? `claim ${rule.attribute} holds “${rule.value}”`
    : `member of LDAP group “${rule.value}”`;
}

async function load() {
  const data = await api('GET', '/api/school-login');
  replaceRows(
    /** @type {HTMLElement} */ (document.getElementById('school-providers')),
    data.providers.map((/** @type {Record<string, any>} */ p) =>
      el(
        'tr',
        {},
        el('td', {}, `${p.name} (${p.id})`),
        el('td', {}, p.kind === 'oidc' ? 'OpenID Connect' : 'LDAP'),
        el('td', {}, p.default_role),
        el('td', {}, p.redirect_uri ? el('code', {}, p.redirect_uri) : '—')
      )
    ),
    'No school login is configured.',
    4
  );
  const select = /** @type {HTMLSelectElement} */ (form.elements.namedItem('provider'));
  select.replaceChildren(
    el('option', { value: '' }, 'any'),
    ...data.providers.map((/** @type {any} */ p) => el('option', { value: p.id }, p.name))
  );
  replaceRows(
    /** @type {HTMLElement} */ (document.getElementById('school-rules')),
    data.rules.map((/** @type {Record<string, any>} */ rule) =>
      el(
        'tr',
        {},
        el('td', {}, rule.provider || 'any'),
        el('td', {}, describe(rule)),
        el('td', {}, rule.role ?? '—'),
        el('td', {}, rule.course ?? '—'),
        el('td', {}, el('button', { type: 'button', onclick: () => remove(rule.id) }, 'Remove'))
      )
    ),
    'No rules: users get their provider’s default role.',
    5
  );
}

/** @param {number} id */
async function remove(id) {
  await api('DELETE', `/api/school-login/rules/${id}`);
  await load();
}

form.addEventListener('submit', async event => {
  event.preventDefault();
  const values = Object.fromEntries(new FormData(form));
  const body = { provider: values.provider, source: values.source, attribute: values.attribute, value: values.value };
  if (values.role) body.role = values.role;
  if (values.course) body.course = values.course;
  try {
    await api('POST', '/api/school-login/rules', body);
    showError('school-rule-error', null);
    form.reset();
    await load();
  } catch (error) {
    showError('school-rule-error', error);
  }
});

load().catch(error => showError('school-rule-error', error));
