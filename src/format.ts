/**
 * Pure helpers: every sentence, number and URL the widgets show is made here,
 * so it can be unit-tested without a DOM or a server.
 */
import {
  Access,
  ICullingStatus,
  IDirectory,
  IGpuType,
  IQuota,
  IResizeRequest,
  IResources,
  IServerInfo,
  ShareAccess
} from './tokens';

const KIB = 1024;
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** The binary unit index that suits a byte count (0 = B, 3 = GiB). */
function unitIndex(bytes: number): number {
  let index = 0;
  let value = Math.abs(bytes);
  while (value >= KIB && index < UNITS.length - 1) {
    value /= KIB;
    index += 1;
  }
  return index;
}

/** A number in a unit: one decimal below 100, none above. */
function scaled(bytes: number, index: number): string {
  const value = bytes / Math.pow(KIB, index);
  if (index === 0) {
    return String(Math.round(value));
  }
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(1);
}

/** A byte count in binary units: "0 B", "1.5 KiB", "800.0 MiB", "2.0 GiB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) {
    return '–';
  }
  const index = unitIndex(bytes);
  return `${scaled(bytes, index)} ${UNITS[index]}`;
}

/**
 * A used/limit pair in the unit of the larger one: "0.8/2.0 GiB"; just the
 * used figure when there is no limit.
 */
export function formatBytePair(used: number, limit: number | null): string {
  if (limit === null || !Number.isFinite(limit)) {
    return formatBytes(used);
  }
  const index = unitIndex(Math.max(used, limit));
  return `${scaled(used, index)}/${scaled(limit, index)} ${UNITS[index]}`;
}

/** A percentage rounded to a whole number: "12%"; "–" when unknown. */
export function formatPercent(percent: number | null | undefined): string {
  if (percent === null || percent === undefined || !Number.isFinite(percent)) {
    return '–';
  }
  return `${Math.round(percent)}%`;
}

/** A number with at most `digits` decimals and no trailing zeros. */
export function formatNumber(value: number, digits = 2): string {
  const factor = Math.pow(10, digits);
  return String(Math.round(value * factor) / factor);
}

/** CPU cores as people say them: "1 CPU", "0.5 CPU", "4 CPUs". */
export function formatCores(cores: number): string {
  return `${formatNumber(cores)} ${cores > 1 ? 'CPUs' : 'CPU'}`;
}

/** Millicores as CPUs: 1500 → "1.5 CPUs". */
export function formatMilliCores(milli: number): string {
  return formatCores(milli / 1000);
}

/** A value as a percentage of a limit, clamped to 0-100; null without a limit. */
export function percentOf(used: number, limit: number | null): number | null {
  if (limit === null || !Number.isFinite(limit) || limit <= 0) {
    return null;
  }
  return Math.min(100, Math.max(0, (used / limit) * 100));
}

/** The CPU use as a percentage of the limit, when it can be known. */
export function cpuPercent(resources: IResources): number | null {
  if (resources.cpu.percent !== null && resources.cpu.percent !== undefined) {
    return resources.cpu.percent;
  }
  return percentOf(resources.cpu.used_cores, resources.cpu.limit_cores);
}

/** "CPU 12%", or "CPU 0.3 cores" when there is no limit to compare with. */
function cpuText(resources: IResources): string {
  const percent = cpuPercent(resources);
  if (percent !== null) {
    return `CPU ${formatPercent(percent)}`;
  }
  return `CPU ${formatNumber(resources.cpu.used_cores, 1)} cores`;
}

/** Whether the notebook has a GPU to report on. */
export function hasGpus(resources: IResources): boolean {
  return resources.gpus.available && resources.gpus.devices.length > 0;
}

/**
 * What the notebook was given when NVML cannot read it: "h200-1g",
 * "2 × standard", "1 MIG slice"; null when it was given nothing.
 */
export function allocatedGpuText(resources: IResources): string | null {
  const given = resources.gpus.allocated;
  const type = given?.gpu_type || null;
  const count = given?.count ?? 0;
  if (!count && !type) {
    return null;
  }
  const what = type ?? (given?.mig ? 'MIG slice' : 'GPU');
  return count > 1 ? `${count} × ${what}` : what;
}

/** A device's short figure: its use ("30%"), or its memory where use is unknown (MIG). */
function deviceFigure(device: IResources['gpus']['devices'][number]): string {
  if (device.utilization === null && device.mig_profile) {
    return formatBytePair(device.memory_used, device.memory_total);
  }
  return formatPercent(device.utilization);
}

/** "GPU 30%", "GPUs 30%/45%", "GPU 1.2/17.8 GiB" (a MIG slice), "GPU h200-1g", or "no GPU". */
function gpuText(resources: IResources): string {
  if (!hasGpus(resources)) {
    const given = allocatedGpuText(resources);
    return given ? `GPU ${given}` : 'no GPU';
  }
  const devices = resources.gpus.devices;
  const figures = devices.map(deviceFigure).join('/');
  return `${devices.length > 1 ? 'GPUs' : 'GPU'} ${figures}`;
}

/** One line per GPU: "GPU 0 (NVIDIA RTX A5000): 30% busy, 2.0/24.0 GiB". */
export function gpuLines(resources: IResources): string[] {
  if (!hasGpus(resources)) {
    const given = allocatedGpuText(resources);
    const message = resources.gpus.message;
    if (given) {
      return [
        message || `Allocated: ${given}; its figures cannot be read here`
      ];
    }
    return [message || 'no GPU on this notebook'];
  }
  return resources.gpus.devices.map((device, index) => {
    const name = device.mig_profile
      ? `${device.model}, MIG ${device.mig_profile}`
      : device.model;
    const busy =
      device.utilization === null && device.mig_profile
        ? 'use not measured per MIG slice'
        : `${formatPercent(device.utilization)} busy`;
    return (
      `GPU ${index} (${name}): ${busy}, ` +
      `${formatBytePair(device.memory_used, device.memory_total)}`
    );
  });
}

/** The status-bar text: "CPU 12% · Mem 0.8/2.0 GiB · GPU 30%". */
export function statusBarText(resources: IResources): string {
  const memory = formatBytePair(
    resources.memory.used_bytes,
    resources.memory.limit_bytes
  );
  return [cpuText(resources), `Mem ${memory}`, gpuText(resources)].join(' · ');
}

/** The status-bar tooltip: the figures in full, one per line. */
export function statusBarTooltip(resources: IResources): string {
  const { cpu, memory } = resources;
  const cores = `${formatNumber(cpu.used_cores)} ${cpu.used_cores === 1 ? 'core' : 'cores'}`;
  const cpuLimit =
    cpu.limit_cores === null
      ? ' (no limit)'
      : ` of ${formatCores(cpu.limit_cores)}`;
  const memoryLimit =
    memory.limit_bytes === null
      ? ' (no limit)'
      : ` of ${formatBytes(memory.limit_bytes)}`;
  const percent = cpuPercent(resources);
  return [
    `CPU: ${cores} in use${cpuLimit}` +
      (percent === null ? '' : ` (${formatPercent(percent)})`),
    `Memory: ${formatBytes(memory.used_bytes)} in use${memoryLimit}`,
    ...gpuLines(resources),
    'Click to open the Resources panel.'
  ].join('\n');
}

/** What this notebook asked for: "2 CPUs, 4.0 GiB memory, 1 × premium GPU". */
export function requestedText(resources: IResources): string {
  const { cpu_milli, memory, gpu_type, gpus } = resources.requested;
  const gpu =
    gpus > 0 && gpu_type ? `${gpus} × ${gpu_type} GPU` : 'no GPU requested';
  return `${formatMilliCores(cpu_milli)}, ${formatBytes(memory)} memory, ${gpu}`;
}

/* ------------------------------------------------------------------ polling */

/**
 * Seconds until the next refresh: the configured interval (at least 1 s),
 * backing off after failures (doubling, up to 60 s or the interval if longer).
 */
export function pollDelaySeconds(
  intervalSeconds: number,
  consecutiveFailures: number
): number {
  const interval =
    Number.isFinite(intervalSeconds) && intervalSeconds >= 1
      ? intervalSeconds
      : 1;
  if (consecutiveFailures <= 0) {
    return interval;
  }
  const backedOff = interval * Math.pow(2, Math.min(consecutiveFailures, 10));
  return Math.min(backedOff, Math.max(60, interval));
}

/* ------------------------------------------------------------------ sharing */

/** One choice of the share dialog's "Expires" list. */
export interface IExpiryChoice {
  id: string;
  label: string;
  /** null = the share does not end. */
  minutes: number | null;
}

/** The expiry choices, in the order the dialog offers them. */
export const EXPIRY_CHOICES: ReadonlyArray<IExpiryChoice> = [
  { id: 'none', label: 'No end', minutes: null },
  { id: '30m', label: '30 minutes', minutes: 30 },
  { id: '1h', label: '1 hour', minutes: 60 },
  { id: '2h', label: '2 hours', minutes: 120 },
  { id: '1d', label: '1 day', minutes: 24 * 60 },
  { id: '1w', label: '1 week', minutes: 7 * 24 * 60 }
];

/**
 * The `expires_in_minutes` of an expiry choice. An unknown id is an error, not
 * "no end": a typo must never make a share last forever.
 */
export function expiryMinutes(choiceId: string): number | null {
  const choice = EXPIRY_CHOICES.find(c => c.id === choiceId);
  if (!choice) {
    throw new Error(`Unknown expiry choice "${choiceId}".`);
  }
  return choice.minutes;
}

/**
 * The link a grantee opens: the share's `url` (an absolute path) made absolute
 * with the page's origin; an http(s) URL is kept as it is.
 */
export function absoluteShareUrl(url: string, origin: string): string {
  if (/^https?:\/\//i.test(url)) {
    return url;
  }
  const base = origin.replace(/\/+$/, '');
  const path = url.startsWith('/') ? url : `/${url}`;
  return `${base}${path}`;
}

/** "2 days", "1 day"; "3 h", "5 min". */
function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/**
 * How long until a share ends: "no end", "expired",
 * "expires in less than a minute", "expires in 29 min",
 * "expires in 1 h 5 min", "expires in 2 days 3 h".
 */
export function countdownText(expiresAt: string | null, now: number): string {
  if (expiresAt === null || expiresAt === '') {
    return 'no end';
  }
  const end = Date.parse(expiresAt);
  if (Number.isNaN(end)) {
    return 'unknown expiry';
  }
  const seconds = Math.floor((end - now) / 1000);
  if (seconds <= 0) {
    return 'expired';
  }
  if (seconds < 60) {
    return 'expires in less than a minute';
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `expires in ${minutes} min`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    const rest = minutes % 60;
    return `expires in ${hours} h${rest ? ` ${rest} min` : ''}`;
  }
  const days = Math.floor(hours / 24);
  const restHours = hours % 24;
  return `expires in ${plural(days, 'day')}${restHours ? ` ${restHours} h` : ''}`;
}

/** "read-only" or "can edit". */
export function accessLabel(access: ShareAccess): string {
  return access === 'edit' ? 'can edit' : 'read-only';
}

/** What a share covers: "whole notebook" or the file's path. */
export function scopeLabel(path: string): string {
  return path ? path : 'whole notebook';
}

/** A suggestion of the share dialog's grantee search. */
export interface IGranteeSuggestion {
  kind: 'user' | 'group';
  name: string;
  display_name: string;
  /** What the list shows: "Bob Lee (bob) · student", "Class A · group". */
  label: string;
}

/** Whether the directory should be asked: from 2 characters on. */
export function shouldSearch(query: string): boolean {
  return query.trim().length >= 2;
}

/**
 * The suggestions to show for a directory answer: people then groups, without
 * the ones already picked and without the user themself, those whose name or
 * display name starts with the query first, at most `limit`.
 */
export function granteeSuggestions(
  directory: IDirectory,
  query: string,
  picked: ReadonlyArray<{ kind: 'user' | 'group'; name: string }>,
  selfName: string | null,
  limit = 8
): IGranteeSuggestion[] {
  const taken = new Set(picked.map(p => `${p.kind}:${p.name}`));
  const q = query.trim().toLowerCase();
  const all: IGranteeSuggestion[] = [
    ...(directory.users ?? [])
      .filter(u => u.name !== selfName)
      .map(u => ({
        kind: 'user' as const,
        name: u.name,
        display_name: u.display_name || u.name,
        label:
          `${u.display_name || u.name} (${u.name})` +
          (u.role ? ` · ${u.role}` : '')
      })),
    ...(directory.groups ?? []).map(g => ({
      kind: 'group' as const,
      name: g.name,
      display_name: g.display_name || g.name,
      label: `${g.display_name || g.name} · group`
    }))
  ].filter(s => !taken.has(`${s.kind}:${s.name}`));
  const starts = (s: IGranteeSuggestion): boolean =>
    q.length > 0 &&
    (s.name.toLowerCase().startsWith(q) ||
      s.display_name.toLowerCase().startsWith(q));
  // A stable sort: the server's order is kept within each rank.
  const ranked = all
    .map((s, index) => ({ s, index, rank: starts(s) ? 0 : 1 }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(r => r.s);
  return ranked.slice(0, Math.max(0, limit));
}

/**
 * The path a share covers for the dialog's "what to share" choice.
 */
export function sharePath(
  scope: 'notebook' | 'file',
  filePath: string | null
): string {
  return scope === 'file' && filePath ? filePath : '';
}

/* ------------------------------------------------------ read-only / shared */

/** The persistent notice for a user who is not the owner; null for the owner. */
export function noticeText(info: IServerInfo): string | null {
  const owner = info.notebook?.owner || 'another user';
  return accessNotice(info.access, owner);
}

/** The notice for an access level and an owner's name. */
export function accessNotice(access: Access, owner: string): string | null {
  switch (access) {
    case 'read':
      return (
        `You are viewing ${owner}'s notebook read-only: you can open and read ` +
        'files, but not save, run cells or open terminals.'
      );
    case 'edit':
      return `You are editing ${owner}'s notebook, shared with you.`;
    default:
      return null;
  }
}

/** The short status-bar label for an access level; null for the owner. */
export function accessStatusLabel(access: Access): string | null {
  switch (access) {
    case 'read':
      return 'Read-only';
    case 'edit':
      return 'Shared: can edit';
    default:
      return null;
  }
}

/** What a single-file share covers, as a sentence; null for a whole notebook. */
export function scopeText(
  scope: ReadonlyArray<string> | undefined
): string | null {
  if (!scope || scope.length === 0) {
    return null;
  }
  return scope.length === 1
    ? `Only ${scope[0]} is shared with you.`
    : `Only these files are shared with you: ${scope.join(', ')}.`;
}

/** The full notice for the status-bar tooltip (notice + what is shared). */
export function fullNotice(info: IServerInfo): string | null {
  const notice = noticeText(info);
  if (!notice) {
    return null;
  }
  const scope = scopeText(info.scope);
  return scope ? `${notice} ${scope}` : notice;
}

/**
 * The kernel-preference fields a read-only share turns off (the shape of
 * `ISessionContext.IKernelPreference`, without importing it).
 */
export interface IKernelStartPreference {
  readonly name?: string;
  readonly shouldReuse?: boolean;
  readonly shouldStart?: boolean;
  readonly canStart?: boolean;
  readonly autoStartDefault?: boolean;
}

/**
 * A kernel preference that never starts or joins a kernel (no automatic
 * start, no default kernel, no start at all, no reuse of the kernel running
 * for the path: a read-only viewer may not open its websocket, so it would
 * only ever say "connecting"), keeping the other fields; the same object
 * when it already does none of these.
 */
export function readOnlyKernelPreference<T extends IKernelStartPreference>(
  preference: T
): T {
  if (
    preference.canStart === false &&
    preference.shouldStart === false &&
    preference.autoStartDefault === false &&
    preference.shouldReuse === false
  ) {
    return preference;
  }
  return {
    ...preference,
    canStart: false,
    shouldStart: false,
    autoStartDefault: false,
    shouldReuse: false
  };
}

/** What each blocked command would have done, for the read-only message. */
const BLOCKED_COMMANDS: { [id: string]: string } = {
  'docmanager:save': 'save files',
  'docmanager:save-all': 'save files',
  'docmanager:save-as': 'save files',
  'docmanager:rename': 'rename files',
  'docmanager:delete': 'delete files',
  'filebrowser:create-new-file': 'create files',
  'filebrowser:create-new-directory': 'create folders',
  'filebrowser:delete': 'delete files',
  'filebrowser:rename': 'rename files',
  'filebrowser:paste': 'paste files',
  'filebrowser:duplicate': 'duplicate files',
  'notebook:create-new': 'create notebooks',
  'notebook:run-cell': 'run cells',
  'notebook:run-cell-and-select-next': 'run cells',
  'notebook:run-cell-and-insert-below': 'run cells',
  'notebook:run-all-cells': 'run cells',
  'notebook:run-all-above': 'run cells',
  'notebook:run-all-below': 'run cells',
  'notebook:restart-run-all': 'run cells',
  'notebook:restart-kernel': 'start kernels',
  'notebook:change-kernel': 'start kernels',
  'runmenu:run': 'run cells',
  'runmenu:run-all': 'run cells',
  'kernelmenu:restart': 'start kernels',
  'kernelmenu:change': 'start kernels',
  'console:create': 'open consoles',
  'terminal:create-new': 'open terminals'
};

/**
 * A clear message for a command a read-only share cannot do, or null when the
 * command is allowed (or the access is not read-only).
 */
export function blockedCommandMessage(
  commandId: string,
  access: Access | null
): string | null {
  if (access !== 'read') {
    return null;
  }
  const what = BLOCKED_COMMANDS[commandId];
  if (!what) {
    return null;
  }
  return `This notebook is shared with you read-only: you cannot ${what} here.`;
}

/* ------------------------------------------------------------------ resize */

/** What the resize dialog's form holds. */
export interface IResizeForm {
  /** CPUs, e.g. 2 or 0.5. */
  cpus: number;
  /** Memory in GiB, e.g. 4 or 0.5. */
  memoryGiB: number;
  /** '' = no GPU. */
  gpuType: string;
  gpus: number;
}

/** A CPU quantity for Kubernetes-style APIs: 2 → "2", 0.5 → "500m". */
export function cpuQuantity(cores: number): string {
  if (Number.isInteger(cores)) {
    return String(cores);
  }
  return `${Math.round(cores * 1000)}m`;
}

/** A memory quantity from GiB: 4 → "4Gi", 0.5 → "512Mi". */
export function memoryQuantity(gib: number): string {
  if (Number.isInteger(gib)) {
    return `${gib}Gi`;
  }
  return `${Math.round(gib * 1024)}Mi`;
}

/** The form's starting values from what the notebook requested. */
export function resizeFormFrom(
  requested: IResources['requested']
): IResizeForm {
  return {
    cpus: Math.round(requested.cpu_milli) / 1000,
    memoryGiB: Math.round((requested.memory / Math.pow(KIB, 3)) * 1000) / 1000,
    gpuType: requested.gpu_type ?? '',
    gpus: requested.gpu_type ? requested.gpus : 0
  };
}

/** A sentence saying what is wrong with the form, or null when it can be sent. */
export function validateResize(form: IResizeForm): string | null {
  if (!Number.isFinite(form.cpus) || form.cpus <= 0) {
    return 'Enter a number of CPUs above 0, e.g. 1 or 0.5.';
  }
  if (Math.round(form.cpus * 1000) < 1) {
    return 'Ask for at least 0.001 CPU.';
  }
  if (!Number.isFinite(form.memoryGiB) || form.memoryGiB <= 0) {
    return 'Enter the memory in GiB, above 0, e.g. 2 or 0.5.';
  }
  if (!Number.isInteger(form.gpus) || form.gpus < 0) {
    return 'Enter a whole number of GPUs, 0 or more.';
  }
  if (form.gpus > 0 && !form.gpuType) {
    return 'Choose a GPU type, or ask for 0 GPUs.';
  }
  return null;
}

/** The `POST resize` body for a valid form. */
export function resizeRequest(form: IResizeForm): IResizeRequest {
  const gpus = form.gpuType ? form.gpus : 0;
  return {
    cpu: cpuQuantity(form.cpus),
    memory: memoryQuantity(form.memoryGiB),
    gpu_type: form.gpuType && gpus > 0 ? form.gpuType : null,
    gpus
  };
}

/** "1 of 4 in use", or "1 in use (no limit)". */
function ofLimit(used: string, limit: string | null): string {
  return limit === null
    ? `${used} in use (no limit)`
    : `${used} of ${limit} in use`;
}

/** The user's quota and current use as lines for the resize dialog. */
export function quotaLines(quota: IQuota): string[] {
  const { limits, usage } = quota;
  const lines = [
    `CPUs: ${ofLimit(
      formatNumber(usage.cpu_milli / 1000),
      limits.cpu_milli === null ? null : formatNumber(limits.cpu_milli / 1000)
    )}`,
    `Memory: ${ofLimit(
      formatBytes(usage.memory),
      limits.memory === null ? null : formatBytes(limits.memory)
    )}`
  ];
  lines.push(...gpuQuotaLines(quota));
  lines.push(
    `Notebooks: ${ofLimit(
      String(usage.notebooks),
      limits.notebooks === null ? null : String(limits.notebooks)
    )}`
  );
  return lines;
}

/** The display name of a GPU type, or its name. */
function gpuTypeName(types: ReadonlyArray<IGpuType>, name: string): string {
  return types.find(t => t.name === name)?.display_name || name;
}

/** One line per GPU type the quota names (or "any type" when unlimited). */
export function gpuQuotaLines(quota: IQuota): string[] {
  const { limits, usage, gpu_types } = quota;
  const used = usage.gpus ?? {};
  if (limits.gpus === null) {
    const inUse = Object.entries(used)
      .filter(([, n]) => n > 0)
      .map(([type, n]) => `${n} ${gpuTypeName(gpu_types, type)}`);
    return [
      `GPUs: any type, no limit; ${inUse.length ? inUse.join(', ') : 'none'} in use`
    ];
  }
  const types = Object.keys(limits.gpus);
  if (types.length === 0) {
    return ['GPUs: your quota allows none'];
  }
  return types.map(
    type =>
      `GPUs (${gpuTypeName(gpu_types, type)}): ${used[type] ?? 0} of ${
        limits.gpus![type]
      } in use`
  );
}

/** A choice of the resize dialog's GPU type list. */
export interface IGpuTypeChoice {
  /** '' = no GPU. */
  value: string;
  label: string;
  /** False when the quota allows none of this type. */
  allowed: boolean;
}

/** Whether the quota allows a GPU type at all. */
export function quotaAllowsGpuType(quota: IQuota, type: string): boolean {
  const gpus = quota.limits.gpus;
  if (gpus === null) {
    return true;
  }
  return (gpus[type] ?? 0) > 0;
}

/**
 * The GPU type list: "No GPU" first, then every offered type with its
 * capacity, those the quota does not allow marked (and disabled by the dialog,
 * except the type the notebook already has).
 */
export function gpuTypeChoices(quota: IQuota): IGpuTypeChoice[] {
  return [
    { value: '', label: 'No GPU', allowed: true },
    ...quota.gpu_types.map(t => {
      const allowed = quotaAllowsGpuType(quota, t.name);
      return {
        value: t.name,
        label:
          `${t.display_name || t.name} (capacity ${t.capacity})` +
          (allowed ? '' : ' — not in your quota'),
        allowed
      };
    })
  ];
}

/**
 * Where to send the browser after a resize: the `restart_url` resolved against
 * the page (it is usually a path on the platform's origin), only if it is an
 * http(s) URL; null otherwise (never a `javascript:` or `data:` URL).
 */
export function restartTarget(
  restartUrl: string,
  pageUrl: string
): string | null {
  let target: URL;
  try {
    target = new URL(restartUrl, pageUrl);
  } catch {
    return null;
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return null;
  }
  return target.href;
}

/* --------------------------------------------------------- shared with me */

/** The state of a shared notebook in words. */
export function notebookStateLabel(state: string): string {
  switch (state) {
    case 'running':
      return 'running';
    case 'stopped':
      return 'stopped';
    case 'starting':
      return 'starting…';
    case 'stopping':
      return 'stopping…';
    default:
      return state;
  }
}

/* -------------------------------------------------------------- culling */

/** Minutes and seconds left until `stopAt`, e.g. "4:07"; "0:00" once passed. */
export function timeLeft(stopAt: string, now: number): string {
  const seconds = Math.max(0, Math.round((Date.parse(stopAt) - now) / 1000));
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${String(seconds % 60).padStart(2, '0')}`;
}

/**
 * The status-bar label of the idle countdown, or null when nothing is
 * announced: "Idle: stops in 4:07".
 */
export function cullingLabel(
  status: ICullingStatus,
  now: number
): string | null {
  if (!status.enabled || status.action !== 'warn' || !status.stop_at) {
    return null;
  }
  return `Idle: stops in ${timeLeft(status.stop_at, now)}`;
}

/** How often to ask the culler: often while a stop is counting down. */
export function cullingPollSeconds(status: ICullingStatus | null): number {
  return status?.action === 'warn' ? 5 : 30;
}
