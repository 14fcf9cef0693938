// @ts-check
import { api, el, replaceRows, showError, showStatus, formatCpu, formatMemory, formatDate } from './common.js';
import { poll } from './poll.js';

const form = /** @type {import('./common.js').FormWith<{ gpu_type: HTMLSelectElement }>} */ (
  document.getElementById('training-form')
);
const jobs = document.getElementById('jobs');
const LOG_REFRESH_MS = 2000;
const LIST_REFRESH_MS = 3000;
const ENDED = ['Succeeded', 'Failed', 'failed'];
/** The job whose logs are shown and the replica chosen. */
const following = { job: null, replica: 'master', index: 0 };

/** The replicas of a job as options: the master, then worker 0, 1, ... */
function replicaChoice(job) {
  const select = /** @type {HTMLSelectElement} */ (el('select', { id: 'logs-replica', 'aria-label': 'Replica' }));
  select.append(el('option', { value: 'master:0' }, 'master'));
  for (let i = 0; i < job.workers; i++) {
    select.append(el('option', { value: `worker:${i}` }, `worker ${i}`));
  }
  select.addEventListener('change', () => {
    const [replica, index] = select.value.split(':');
    following.replica = replica;
    following.index = Number(index);
    logs.now();
  });
  return select;
}

/** Fetch the chosen replica's last lines; keep following while the job runs. */
async function loadLogs() {
  const job = following.job;
  if (!job) return false;
  const base = `/api/training/${encodeURIComponent(job.owner)}/${encodeURIComponent(job.name)}`;
  const query = `?replica=${following.replica}&index=${following.index}`;
  const response = await fetch(`${base}/logs${query}`, { credentials: 'same-origin' });
  const text = await response.text();
  const pre = document.getElementById('logs');
  pre.textContent = response.ok ? text || '(nothing printed yet)' : text;
  pre.scrollTop = pre.scrollHeight;
  const now = await api('GET', base).catch(() => null);
  return Boolean(now && following.job === job && !ENDED.includes(now.phase));
}
const logs = poll(loadLogs, { everyMs: LOG_REFRESH_MS });

function showLogs(job) {
  Object.assign(following, { job, replica: 'master', index: 0 });
  const title = document.getElementById('logs-title');
  title.replaceChildren(`Logs of ${job.name} `, replicaChoice(job));
  document.getElementById('logs-box').hidden = false;
  logs.now();
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

/** The jobs, followed while any is queued or running. */
async function loadJobs() {
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
  return detailed.some(job => !ENDED.includes(job.phase));
}
const jobList = poll(loadJobs, { everyMs: LIST_REFRESH_MS });
const refresh = () => jobList.now();

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
const local = version.backend.name === 'local';
if (!version.backend.training_jobs) {
  const note = document.getElementById('training-unsupported');
  note.textContent = `Training jobs need the kubernetes backend; this platform runs the ${version.backend.name} backend.`;
  note.hidden = false;
  document.getElementById('training-new').hidden = true;
} else if (local) {
  // One machine: the job runs with torchrun in an environment built here, named in `image`.
  document.getElementById('training-hint').textContent =
    'A training job runs one master and any number of workers on this machine, started together by ' +
    'torchrun in the environment you choose, each with the same resources. It waits in the queue while ' +
    `the GPUs it needs are busy. ${version.backend.training_network ?? ''}`;
  document.querySelector('label[for="j-image"]').textContent = 'Environment';
  const image = /** @type {HTMLInputElement} */ (document.getElementById('j-image'));
  image.placeholder = 'pytorch';
  const [types, environments] = await Promise.all([api('GET', '/api/gpu-types'), api('GET', '/api/environments')]);
  form.elements.gpu_type.append(...types.map(t => el('option', { value: t.name }, t.display_name || t.name)));
  document
    .getElementById('j-images')
    .append(
      ...environments.filter(e => e.local_prefix).map(e => el('option', { value: e.name }, e.display_name || e.name))
    );
} else {
  const [types, images] = await Promise.all([api('GET', '/api/gpu-types'), api('GET', '/api/images')]);
  form.elements.gpu_type.append(...types.map(t => el('option', { value: t.name }, t.display_name || t.name)));
  document
    .getElementById('j-images')
    .append(...[...images.environments, ...images.used].map(i => el('option', { value: i })));
}
refresh();
