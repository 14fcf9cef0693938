// @ts-check
import { api, el, showStatus, formatCpu, formatMemory } from './common.js';

const gallery = document.getElementById('gallery');
const filter = /** @type {HTMLInputElement} */ (document.getElementById('template-filter'));
const group = /** @type {HTMLSelectElement} */ (document.getElementById('template-group'));

export async function startFrom(name) {
  const nb = await api('POST', '/api/notebooks', { template: name, start: true });
  window.location.assign(
    `/notebook/auto-start/${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.name)}?next=${encodeURIComponent(nb.url)}`
  );
}

function card(template) {
  const v = template.latest;
  const resources = v
    ? `${formatCpu(v.cpu_milli)} · ${formatMemory(v.memory)}${v.gpus ? ` · ${v.gpus}× ${v.gpu_type}` : ''}`
    : 'no version yet';
  return el(
    'li',
    { class: 'card template-card', dataset: { template: template.name } },
    el(
      'h2',
      {},
      el('a', { href: `/templates/${encodeURIComponent(template.name)}` }, template.display_name || template.name)
    ),
    el(
      'p',
      { class: 'hint' },
      `by ${template.author || 'unknown'}${template.group ? ` · course ${template.group}` : ''}` +
        (v ? ` · version ${v.version}${v.label ? ` (${v.label})` : ''}` : '')
    ),
    template.description ? el('p', {}, template.description) : null,
    el('p', { class: 'small' }, `${resources} · ${v ? v.files : 0} files · ${v ? v.environment : ''}`),
    el(
      'button',
      {
        type: 'button',
        class: 'primary',
        disabled: !v,
        'aria-label': `Start a notebook from ${template.display_name || template.name}`,
        onclick: async event => {
          event.target.disabled = true;
          try {
            await startFrom(template.name);
          } catch (error) {
            showStatus(error.message, 'error');
            event.target.disabled = false;
          }
        }
      },
      'Start'
    )
  );
}

async function refresh() {
  const params = new URLSearchParams();
  if (filter.value) params.set('q', filter.value);
  if (group.value) params.set('group', group.value);
  const templates = await api('GET', `/api/templates?${params}`);
  gallery.replaceChildren(
    ...(templates.length ? templates.map(card) : [el('li', { class: 'hint' }, 'No template matches.')])
  );
}

if (gallery) {
  const groups = await api('GET', '/api/groups');
  group.append(...groups.map(g => el('option', { value: g.name }, g.display_name || g.name)));
  filter.addEventListener('input', refresh);
  group.addEventListener('input', refresh);
  refresh();
}
