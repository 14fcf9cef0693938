/**
 * Pure helpers of the Resources feature: the status-bar text and tooltip,
 * the CPU and GPU figures of the Resources panel.
 */
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
