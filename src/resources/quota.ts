/**
 * Pure helpers of the Resize dialog: the form, its checks and request body,
 * and the quota and GPU-type lines it shows.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { formatBytes, formatNumber, KIB } from '../format';
import { IGpuType, IQuota, IResizeRequest, IResources } from '../apiTypes';

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

/** The GPU count that goes with a GPU type: none without one, at least one with one. */
export function gpuCountFor(gpuType: string, gpus: string): string {
  if (!gpuType) {
    return '0';
  }
  return Number(gpus) < 1 ? '1' : gpus;
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
export function validateResize(
  form: IResizeForm,
  trans: TranslationBundle
): string | null {
  if (!Number.isFinite(form.cpus) || form.cpus <= 0) {
    return trans.__('Enter a number of CPUs above 0, e.g. 1 or 0.5.');
  }
  if (Math.round(form.cpus * 1000) < 1) {
    return trans.__('Ask for at least 0.001 CPU.');
  }
  if (!Number.isFinite(form.memoryGiB) || form.memoryGiB <= 0) {
    return trans.__('Enter the memory in GiB, above 0, e.g. 2 or 0.5.');
  }
  if (!Number.isInteger(form.gpus) || form.gpus < 0) {
    return trans.__('Enter a whole number of GPUs, 0 or more.');
  }
  if (form.gpus > 0 && !form.gpuType) {
    return trans.__('Choose a GPU type, or ask for 0 GPUs.');
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
function ofLimit(
  used: string,
  limit: string | null,
  trans: TranslationBundle
): string {
  return limit === null
    ? trans.__('%1 in use (no limit)', used)
    : trans.__('%1 of %2 in use', used, limit);
}

/** The user's quota and current use as lines for the resize dialog. */
export function quotaLines(quota: IQuota, trans: TranslationBundle): string[] {
  const { limits, usage } = quota;
  const lines = [
    trans.__(
      'CPUs: %1',
      ofLimit(
        formatNumber(usage.cpu_milli / 1000),
        limits.cpu_milli === null
          ? null
          : formatNumber(limits.cpu_milli / 1000),
        trans
      )
    ),
    trans.__(
      'Memory: %1',
      ofLimit(
        formatBytes(usage.memory),
        limits.memory === null ? null : formatBytes(limits.memory),
        trans
      )
    )
  ];
  lines.push(...gpuQuotaLines(quota, trans));
  lines.push(
    trans.__(
      'Notebooks: %1',
      ofLimit(
        String(usage.notebooks),
        limits.notebooks === null ? null : String(limits.notebooks),
        trans
      )
    )
  );
  return lines;
}

/** The display name of a GPU type, or its name. */
function gpuTypeName(types: ReadonlyArray<IGpuType>, name: string): string {
  return types.find(t => t.name === name)?.display_name || name;
}

/** One line per GPU type the quota names (or "any type" when unlimited). */
export function gpuQuotaLines(
  quota: IQuota,
  trans: TranslationBundle
): string[] {
  const { limits, usage, gpu_types } = quota;
  const used = usage.gpus ?? {};
  if (limits.gpus === null) {
    const inUse = Object.entries(used)
      .filter(([, n]) => n > 0)
      .map(([type, n]) => `${n} ${gpuTypeName(gpu_types, type)}`);
    return [
      trans.__(
        'GPUs: any type, no limit; %1 in use',
        inUse.length ? inUse.join(', ') : trans.__('none')
      )
    ];
  }
  const types = Object.keys(limits.gpus);
  if (types.length === 0) {
    return [trans.__('GPUs: your quota allows none')];
  }
  return types.map(type =>
    trans.__(
      'GPUs (%1): %2 of %3 in use',
      gpuTypeName(gpu_types, type),
      used[type] ?? 0,
      limits.gpus![type]
    )
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
export function gpuTypeChoices(
  quota: IQuota,
  trans: TranslationBundle
): IGpuTypeChoice[] {
  return [
    { value: '', label: trans.__('No GPU'), allowed: true },
    ...quota.gpu_types.map(t => {
      const label = trans.__(
        '%1 (capacity %2)',
        t.display_name || t.name,
        t.capacity
      );
      const allowed = quotaAllowsGpuType(quota, t.name);
      return {
        value: t.name,
        label: allowed ? label : trans.__('%1 — not in your quota', label),
        allowed
      };
    })
  ];
}
