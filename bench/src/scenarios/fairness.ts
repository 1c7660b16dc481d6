import type { BackendInstance } from '../backends/types.js';
import { median, nowMs } from '../stats.js';
import { benchEngine, bigGroupWorkflow, smallGroupWorkflow } from './workflows.js';
import type { Queue } from '@cairn/core';

export interface FairnessResult {
  queue: string;
  store: string;
  bigRuns: number;
  smallRuns: number;
  concurrency: number;
  groupConcurrency: number;
  workMs: number;
  /** Worst submit → first claim of the small group's runs. */
  smallWorstWaitMs: number;
  /** Worst submit → first claim of the big group's runs (≈ how long it takes to drain it). */
  bigWorstWaitMs: number;
  /** Median execution time of one run (claim → completion). */
  medianRunMs: number;
  /** Everything submitted → everything finished. */
  totalMs: number;
}

export interface FairnessOptions {
  smallRuns: number;
  ratio: number;
  workMs: number;
  concurrency: number;
  groupConcurrency: number;
  /** The queue to use (default: the engine's own local queue). */
  queue?: Queue;
  queueName?: string;
}

/**
 * `shared-groups` fairness: the big group submits `ratio`× the small group's runs first, then the
 * small group submits; both drain through one shared orchestrator queue. With fair groups the
 * small group's runs start after a few runs, not after the whole backlog.
 */
export async function fairness(backend: BackendInstance, options: FairnessOptions): Promise<FairnessResult> {
  const opened = await backend.openStore();
  const { probe } = opened;
  probe.trackRuns = true;
  const engine = benchEngine(probe.store, {
    recovering: true,
    queueStrategy: 'shared-groups',
    concurrency: options.concurrency,
    groupConcurrency: options.groupConcurrency,
    ...(options.queue ? { queue: options.queue } : {}),
  });
  const submitted = new Map<string, number>();
  const big: string[] = [];
  const small: string[] = [];
  await engine.start();
  let totalMs: number;
  try {
    const t0 = nowMs();
    for (let i = 0; i < options.smallRuns * options.ratio; i++) {
      const at = nowMs();
      const h = await engine.startRun(bigGroupWorkflow, options.workMs);
      submitted.set(h.id, at);
      big.push(h.id);
    }
    for (let i = 0; i < options.smallRuns; i++) {
      const at = nowMs();
      const h = await engine.startRun(smallGroupWorkflow, options.workMs);
      submitted.set(h.id, at);
      small.push(h.id);
    }
    await Promise.all([...big, ...small].map((id) => engine.result(id)));
    totalMs = Math.max(...[...big, ...small].map((id) => probe.finishedAt.get(id) ?? Number.NaN)) - t0;
  } finally {
    probe.trackRuns = false;
    await engine.stop();
    await options.queue?.close();
    await opened.close();
  }
  const wait = (id: string) => (probe.firstClaimAt.get(id) ?? Number.NaN) - (submitted.get(id) ?? Number.NaN);
  return {
    queue: options.queueName ?? 'local',
    store: backend.title,
    bigRuns: big.length,
    smallRuns: small.length,
    concurrency: options.concurrency,
    groupConcurrency: options.groupConcurrency,
    workMs: options.workMs,
    smallWorstWaitMs: Math.max(...small.map(wait)),
    bigWorstWaitMs: Math.max(...big.map(wait)),
    medianRunMs: median([...big, ...small].map((id) => (probe.finishedAt.get(id) ?? Number.NaN) - (probe.firstClaimAt.get(id) ?? Number.NaN))),
    totalMs,
  };
}
