import type { BackendInstance } from '../backends/types.js';
import { median, nowMs } from '../stats.js';
import { benchEngine, bigGroupWorkflow, smallGroupWorkflow } from './workflows.js';
import { createLocalQueue } from '@cairn/core';
import type { Queue } from '@cairn/core/backend';

export interface FairnessResult {
  queue: string;
  store: string;
  bigRuns: number;
  smallRuns: number;
  concurrency: number;
  groupConcurrency: number;
  workMs: number;
  /** Worst wait of the small group's runs: workers started (the whole backlog queued) → first claim. */
  smallWorstWaitMs: number;
  /** The same for the big group's runs (≈ how long it takes to drain it). */
  bigWorstWaitMs: number;
  /** Workers started → the first claim of any run (queue and worker start-up, first fetch). */
  firstClaimMs: number;
  /** Median execution time of one run (claim → completion). */
  medianRunMs: number;
  /** Workers started → everything finished. */
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
 * small group submits; then the workers start and both drain through one shared orchestrator
 * queue. With fair groups the small group's runs start after a few runs, not after the backlog.
 */
export async function fairness(backend: BackendInstance, options: FairnessOptions): Promise<FairnessResult> {
  const opened = await backend.openStore();
  const { probe } = opened;
  probe.trackRuns = true;
  // One queue for both engines: a client engine (no workers) submits the whole backlog first, then
  // the worker engine starts and drains it. Otherwise a slow submitter (pg-boss: one durable insert
  // per job) would feed the workers one run at a time and no backlog would ever build up.
  const queue = options.queue ?? createLocalQueue();
  const shared = { queueStrategy: 'shared-groups' as const, queue, concurrency: options.concurrency, groupConcurrency: options.groupConcurrency };
  const client = benchEngine(probe.store, shared);
  const engine = benchEngine(probe.store, { recovering: true, ...shared });
  const big: string[] = [];
  const small: string[] = [];
  let drainStart: number;
  let totalMs: number;
  try {
    await client.start({ workers: false });
    for (let i = 0; i < options.smallRuns * options.ratio; i++) big.push((await client.startRun(bigGroupWorkflow, options.workMs)).id);
    for (let i = 0; i < options.smallRuns; i++) small.push((await client.startRun(smallGroupWorkflow, options.workMs)).id);
    drainStart = nowMs();
    await engine.start();
    for (const id of [...big, ...small]) await client.result(id);
    totalMs = Math.max(...[...big, ...small].map((id) => probe.finishedAt.get(id) ?? Number.NaN)) - drainStart;
  } finally {
    probe.trackRuns = false;
    await engine.stop();
    await client.stop();
    await queue.close();
    await opened.close();
  }
  const wait = (id: string) => (probe.firstClaimAt.get(id) ?? Number.NaN) - drainStart;
  return {
    queue: options.queueName ?? 'local',
    store: backend.title,
    bigRuns: big.length,
    smallRuns: small.length,
    concurrency: options.concurrency,
    groupConcurrency: options.groupConcurrency,
    workMs: options.workMs,
    firstClaimMs: Math.min(...[...big, ...small].map(wait)),
    smallWorstWaitMs: Math.max(...small.map(wait)),
    bigWorstWaitMs: Math.max(...big.map(wait)),
    medianRunMs: median([...big, ...small].map((id) => (probe.finishedAt.get(id) ?? Number.NaN) - (probe.firstClaimAt.get(id) ?? Number.NaN))),
    totalMs,
  };
}
