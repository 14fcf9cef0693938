import { api, el, formatDate } from './common.js';

const tbody = document.getElementById('events');
const form = document.getElementById('audit-filter');
const older = document.getElementById('older');
let oldest = null;

function details(event) {
  if (!event.details) return '';
  return Object.entries(event.details)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([key, value]) => `${key}: ${typeof value === 'object' ? JSON.stringify(value) : value}`)
    .join('; ');
}

async function load(append) {
  const params = new URLSearchParams();
  for (const [key, value] of new FormData(form)) if (value) params.set(key, value);
  if (append && oldest) params.set('before', oldest);
  params.set('limit', '100');
  const events = await api('GET', `/api/audit?${params}`);
  const rows = events.map(event => el('tr', {},
    el('td', { class: 'nowrap' }, formatDate(event.at)),
    el('td', {}, event.actor),
    el('td', {}, el('code', {}, event.action)),
    el('td', {}, event.target),
    el('td', { class: 'small' }, details(event))));
  if (append) tbody.append(...rows);
  else tbody.replaceChildren(...rows);
  oldest = events.length ? events[events.length - 1].id : oldest;
  older.hidden = events.length < 100;
}

form.addEventListener('submit', event => {
  event.preventDefault();
  oldest = null;
  load(false);
});
older.addEventListener('click', () => load(true));
load(false);
