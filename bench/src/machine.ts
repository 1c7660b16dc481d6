import { cpus, freemem, loadavg, platform, release, totalmem } from 'node:os';

/** What the numbers were measured on. */
export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  /** Server product, version and durability per backend, filled in as servers start. */
  servers: Record<string, string>;
  date: string;
  /** 1-minute load average when the run started and when it ended (others' work shares the CPUs). */
  loadAtStart: number;
  loadAtEnd?: number;
}

export function loadAverage(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${platform()} ${release()}`,
    node: process.version,
    servers: {},
    date: new Date().toISOString(),
    loadAtStart: loadAverage(),
  };
}

export { freemem };
