// @ts-check
import { api, el, replaceRows, showError, showStatus, formatCpu, formatMemory, formatDate } from './common.js';

const form = /** @type {import('./common.js').FormWith<{ gpu_type: HTMLSelectElement }>} */ (
  document.getElementById('training-form')
);
const jobs = document.getElementById('jobs');

async function showLogs(job) {
  const box = document.getElementById('logs-box');
  const text = await fetch(`/api/training/${encodeURIComponent(job.owner)}/${encodeURIComponent(job.name)}/logs`, {
    credentials: 'same-origin'
  }).then(r => r.text());
  document.getElementById('logs-title').textContent = `Logs of ${job.name} (master)`;
  document.getElementById('logs').textContent = text || '(nothing printed yet)';
  box.hidden = false;
}

async function remove(job) {
  if (!confirm(`Stop and delete training job "${job.name}"?`)) return;
  try {
    await api('DELETE', `/api/training/${encodeURIComponent(job.owner)}/${encodeURIComponent(job.name)}`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  refresh();
}

async function refresh() {
  const list = await api('GET', '/api/training');
  const detailed = await Promise.all(
    list.map(job =>
      api('GET', `/api/training/${encodeURIComponent(job.owner)}/${encodeURIComponent(job.name)}`).catch(() => job)
    )
  );
  replaceRows(
    jobs,
    detailed.map(job =>
      el(
        'tr',
        { dataset: { job: job.name } },
        el('th', { scope: 'row' }, job.name, el('div', { class: 'hint' }, `${job.image} · ${job.command.join(' ')}`)),
        el(
          'td',
          {},
          `${job.workers + 1} × (${formatCpu(job.cpu_milli)}, ${formatMemory(job.memory)}` +
            (job.gpus ? `, ${job.gpus}× ${job.gpu_type})` : ')')
        ),
        el(
          'td',
          {},
          el('strong', {}, job.phase),
          job.message ? el('div', { class: 'hint' }, job.message) : null,
          el('div', { class: 'hint' }, formatDate(job.submitted_at || job.created_at))
        ),
        el(
          'td',
          { class: 'actions' },
          el('button', { type: 'button', onclick: () => showLogs(job) }, 'Logs'),
          el('button', { type: 'button', class: 'danger', onclick: () => remove(job) }, 'Delete')
        )
      )
    ),
    'No training jobs.',
    4
  );
}

form.addEventListener('submit', async event => {
  event.preventDefault();
  showError('training-error', null);
  const data = new FormData(form);
  try {
    await api('POST', '/api/training', {
      name: data.get('name'),
      image: data.get('image'),
      command: data.get('command'),
      workers: Number(data.get('workers') || 0),
      cpu: data.get('cpu'),
      memory: data.get('memory'),
      gpu_type: data.get('gpu_type') || null,
      gpus: Number(data.get('gpus') || 0)
    });
    form.reset();
    refresh();
  } catch (error) {
    showError('training-error', error);
  }
});

const version = await api('GET', '/api/version');
if (!version.backend.training_jobs) {
  const note = document.getElementById('training-unsupported');
  note.textContent = `Training jobs need the kubernetes backend; this platform runs the ${version.backend.name} backend.`;
  note.hidden = false;
  document.getElementById('training-new').hidden = true;
} else {
  const [types, images] = await Promise.all([api('GET', '/api/gpu-types'), api('GET', '/api/images')]);
  form.elements.gpu_type.append(...types.map(t => el('option', { value: t.name }, t.display_name || t.name)));
  document
    .getElementById('j-images')
    .append(...[...images.environments, ...images.used].map(i => el('option', { value: i })));
}
refresh();
