import { cpus, freemem, platform, release, totalmem } from 'node:os';

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
  };
}

export { freemem };
