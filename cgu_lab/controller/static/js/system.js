import { api, el, replaceRows, showError, fact } from './common.js';

const form = document.getElementById('env-form');

async function load() {
  const version = await api('GET', '/api/version');
  const dl = document.getElementById('backend');
  dl.replaceChildren();
  fact(dl, 'Version', version.version);
  for (const [key, value] of Object.entries(version.backend)) {
    if (value && typeof value === 'object') {
      // e.g. notebook origins: where notebooks live and how isolated they are
      for (const [part, text] of Object.entries(value)) fact(dl, `${key.replaceAll('_', ' ')}: ${part}`, String(text));
    } else {
      fact(dl, key.replaceAll('_', ' '), String(value));
    }
  }
  const environments = await api('GET', '/api/environments');
  replaceRows(document.getElementById('environments'), environments.map(env => el('tr', {},
    el('th', { scope: 'row' }, env.name, el('div', { class: 'hint' }, env.display_name)),
    el('td', {}, el('code', {}, env.image || '—')),
    el('td', {}, el('code', {}, env.local_prefix || '—')),
    el('td', {}, env.is_default ? 'yes' : ''))), 'No environments.', 4);
}

form.addEventListener('submit', async event => {
  event.preventDefault();
  const data = new FormData(form);
  showError('env-error', null);
  try {
    await api('PUT', `/api/environments/${encodeURIComponent(data.get('name'))}`, {
      display_name: data.get('display_name'), image: data.get('image'),
      local_prefix: data.get('local_prefix'), is_default: form.elements.is_default.checked
    });
    form.reset();
    load();
  } catch (error) {
    showError('env-error', error);
  }
});

load();
