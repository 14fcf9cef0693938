// @ts-check
import { api, el, replaceRows, showStatus, showError, fact, formatCpu, formatMemory, formatDate } from './common.js';
import { startFrom } from './templates.js';

const page = document.getElementById('template-page');
const name = page.dataset.template;
const base = `/api/templates/${encodeURIComponent(name)}`;
const form = /** @type {import('./common.js').FormWith<{
  display_name: HTMLInputElement, description: HTMLTextAreaElement, visibility: HTMLSelectElement, group: HTMLSelectElement
}>} */ (document.getElementById('template-form'));

/** @typedef {import('../../../../src/apiSchema').components['schemas']['TemplateOut']} TemplateOut */

/** @param {TemplateOut} template */
function render(template) {
  document.getElementById('template-title').textContent = template.display_name || template.name;
  document.getElementById('template-description').textContent = template.description;
  const facts = document.getElementById('template-facts');
  facts.replaceChildren();
  fact(facts, 'Author', template.author);
  fact(
    facts,
    'Who may use it',
    template.visibility === 'group'
      ? `course ${template.group}`
      : template.visibility === 'public'
        ? 'everyone'
        : 'only its author'
  );
  if (template.retired) fact(facts, 'State', 'retired');
  replaceRows(
    document.getElementById('versions'),
    template.versions.map(v =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, `${v.version}${v.label ? ` (${v.label})` : ''}`),
        el('td', {}, v.environment),
        el(
          'td',
          {},
          `${formatCpu(v.cpu_milli)} · ${formatMemory(v.memory)}${v.gpus ? ` · ${v.gpus}× ${v.gpu_type}` : ''}`
        ),
        el('td', {}, `${v.files} (${formatMemory(v.bytes)})`),
        el('td', {}, `${formatDate(v.created_at)} by ${v.created_by}`),
        el('td', {}, el('button', { type: 'button', onclick: () => startVersion(v.version) }, 'Start this version'))
      )
    ),
    'No version yet.',
    6
  );
  if (template.mine) {
    document.getElementById('template-edit').hidden = false;
    form.elements.display_name.value = template.display_name;
    form.elements.description.value = template.description;
    form.elements.visibility.value = template.visibility;
    form.elements.group.value = template.group || '';
    document.getElementById('retire-template').textContent = template.retired ? 'Restore' : 'Retire';
  }
  const start = /** @type {HTMLButtonElement} */ (document.getElementById('start-template'));
  start.disabled = template.retired || !template.latest;
}

/** @param {number} version */
async function startVersion(version) {
  try {
    const nb = await api('POST', '/api/notebooks', { template: name, template_version: version, start: true });
    window.location.assign(
      `/notebook/auto-start/${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.name)}?next=${encodeURIComponent(nb.url)}`
    );
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

async function load() {
  const template = await api('GET', base);
  render(template);
  return template;
}

let current = await load();
const groups = await api('GET', '/api/groups');
form.elements.group.append(...groups.map(g => el('option', { value: g.name }, g.name)));
form.elements.group.value = current.group || '';
document.getElementById('start-template').addEventListener('click', async () => {
  try {
    await startFrom(name);
  } catch (error) {
    showStatus(error.message, 'error');
  }
});
form.addEventListener('submit', async event => {
  event.preventDefault();
  showError('template-error', null);
  try {
    current = await api('PATCH', base, {
      display_name: form.elements.display_name.value,
      description: form.elements.description.value,
      visibility: form.elements.visibility.value,
      group: form.elements.group.value || null
    });
    render(current);
    showStatus('The template was saved.');
  } catch (error) {
    showError('template-error', error);
  }
});
document.getElementById('retire-template').addEventListener('click', async () => {
  current = await api('PATCH', base, { retired: !current.retired });
  render(current);
  showStatus(current.retired ? 'The template is retired: nobody can start it any more.' : 'The template is back.');
});
