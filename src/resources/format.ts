/**
 * Pure helpers of the Resources feature: the status-bar text and tooltip,
 * the CPU and GPU figures of the Resources panel.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import {
  formatBytePair,
  formatBytes,
  formatCores,
  formatMilliCores,
  formatNumber,
  formatPercent,
  percentOf
} from '../format';
import { IResources } from '../apiTypes';

/** The CPU use as a percentage of the limit, when it can be known. */
export function cpuPercent(resources: IResources): number | null {
  if (resources.cpu.percent !== null && resources.cpu.percent !== undefined) {
    return resources.cpu.percent;
  }
  return percentOf(resources.cpu.used_cores, resources.cpu.limit_cores);
}

/** "CPU 12%", or "CPU 0.3 cores" when there is no limit to compare with. */
function cpuText(resources: IResources, trans: TranslationBundle): string {
  const percent = cpuPercent(resources);
  if (percent !== null) {
    return trans.__('CPU %1', formatPercent(percent));
  }
  return trans.__('CPU %1 cores', formatNumber(resources.cpu.used_cores, 1));
}

/** Whether the notebook has a GPU to report on. */
export function hasGpus(resources: IResources): boolean {
  return resources.gpus.available && resources.gpus.devices.length > 0;
}

/**
 * What the notebook was given when NVML cannot read it: "h200-1g",
 * "2 × standard", "1 MIG slice"; null when it was given nothing.
 */
export function allocatedGpuText(
  resources: IResources,
  trans: TranslationBundle
): string | null {
  const given = resources.gpus.allocated;
  const type = given?.gpu_type || null;
  const count = given?.count ?? 0;
  if (!count && !type) {
    return null;
  }
  const what = type ?? (given?.mig ? trans.__('MIG slice') : trans.__('GPU'));
  return count > 1 ? trans.__('%1 × %2', count, what) : what;
}

/** A device's short figure: its use ("30%"), or its memory where use is unknown (MIG). */
function deviceFigure(device: IResources['gpus']['devices'][number]): string {
  if (device.utilization === null && device.mig_profile) {
    return formatBytePair(device.memory_used, device.memory_total);
  }
  return formatPercent(device.utilization);
}

/** "GPU 30%", "GPUs 30%/45%", "GPU 1.2/17.8 GiB" (a MIG slice), "GPU h200-1g", or "no GPU". */
function gpuText(resources: IResources, trans: TranslationBundle): string {
  if (!hasGpus(resources)) {
    const given = allocatedGpuText(resources, trans);
    return given ? trans.__('GPU %1', given) : trans.__('no GPU');
  }
  const devices = resources.gpus.devices;
  const figures = devices.map(deviceFigure).join('/');
  return devices.length > 1
    ? trans.__('GPUs %1', figures)
    : trans.__('GPU %1', figures);
}

/** One line per GPU: "GPU 0 (NVIDIA RTX A5000): 30% busy, 2.0/24.0 GiB". */
export function gpuLines(
  resources: IResources,
  trans: TranslationBundle
): string[] {
  if (!hasGpus(resources)) {
    const given = allocatedGpuText(resources, trans);
    const message = resources.gpus.message;
    if (given) {
      return [
        message ||
          trans.__('Allocated: %1; its figures cannot be read here', given)
      ];
    }
    return [message || trans.__('no GPU on this notebook')];
  }
  return resources.gpus.devices.map((device, index) => {
    const name = device.mig_profile
      ? trans.__('%1, MIG %2', device.model, device.mig_profile)
      : device.model;
    const busy =
      device.utilization === null && device.mig_profile
        ? trans.__('use not measured per MIG slice')
        : trans.__('%1 busy', formatPercent(device.utilization));
    return trans.__(
      'GPU %1 (%2): %3, %4',
      index,
      name,
      busy,
      formatBytePair(device.memory_used, device.memory_total)
    );
  });
}

/** The status-bar text: "CPU 12% · Mem 0.8/2.0 GiB · GPU 30%". */
export function statusBarText(
  resources: IResources,
  trans: TranslationBundle
): string {
  const memory = formatBytePair(
    resources.memory.used_bytes,
    resources.memory.limit_bytes
  );
  return [
    cpuText(resources, trans),
    trans.__('Mem %1', memory),
    gpuText(resources, trans)
  ].join(' · ');
}

/** The status-bar tooltip: the figures in full, one per line. */
export function statusBarTooltip(
  resources: IResources,
  trans: TranslationBundle
): string {
  const { cpu, memory } = resources;
  const used = formatNumber(cpu.used_cores);
  const cores =
    cpu.used_cores === 1
      ? trans.__('%1 core', used)
      : trans.__('%1 cores', used);
  const cpuLine =
    cpu.limit_cores === null
      ? trans.__('CPU: %1 in use (no limit)', cores)
      : trans.__(
          'CPU: %1 in use of %2',
          cores,
          formatCores(cpu.limit_cores, trans)
        );
  const percent = cpuPercent(resources);
  const memoryLine =
    memory.limit_bytes === null
      ? trans.__('Memory: %1 in use (no limit)', formatBytes(memory.used_bytes))
      : trans.__(
          'Memory: %1 in use of %2',
          formatBytes(memory.used_bytes),
          formatBytes(memory.limit_bytes)
        );
  return [
    percent === null
      ? cpuLine
      : trans.__('%1 (%2)', cpuLine, formatPercent(percent)),
    memoryLine,
    ...gpuLines(resources, trans),
    trans.__('Click to open the Resources panel.')
  ].join('\n');
}

/** What this notebook asked for: "2 CPUs, 4.0 GiB memory, 1 × premium GPU". */
export function requestedText(
  resources: IResources,
  trans: TranslationBundle
): string {
  const { cpu_milli, memory, gpu_type, gpus } = resources.requested;
  const gpu =
    gpus > 0 && gpu_type
      ? trans.__('%1 × %2 GPU', gpus, gpu_type)
      : trans.__('no GPU requested');
  return trans.__(
    '%1, %2 memory, %3',
    formatMilliCores(cpu_milli, trans),
    formatBytes(memory),
    gpu
  );
}
