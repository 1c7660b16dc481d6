import { countingStore } from '@cairn/core/backend';
import type { BackendInstance } from '../backends/types.js';
import { median, nowMs, percentile, repeat } from '../stats.js';
import { benchEngine, latencyWorkflow, stepsWorkflow } from './workflows.js';

export interface LatencyStats {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface LatencyResult {
  /** Completion → `result()` resolving, when the engine that ran the run is the one waiting. */
  sameProcess: LatencyStats;
  /** The same, for a second engine (no workers) over its own connection: it polls the store. */
  polling: LatencyStats;
  /** Whole `startRun` → `result()` of a 10-step run, inline and queued (local queue), medians. */
  inlineStartToResultMs: number;
  queuedStartToResultMs: number;
  /** Worst completion → result() of those 10-step runs. */
  tenStepWorstLagMs: number;
  tenStepReps: number;
  /**
   * Store reads (`runs.get`) per `result()` made by the engine executing the run: inline starts
   * (the sameProcess samples), and queued starts on the local queue (result() called right after
   * startRun, before the worker has claimed the run). Counts, checked in every mode.
   */
  readsPerResult: { inline: number; queued: number };
}

export interface LatencyOptions {
  samples: number;
  /** Each latency run's step takes a pseudo-random 0..maxWorkMs, so completions land anywhere in a poll interval. */
  maxWorkMs: number;
  warmup: number;
  reps: number;
}

function stats(values: number[]): LatencyStats {
  return { samples: values.length, p50Ms: percentile(values, 50), p99Ms: percentile(values, 99), maxMs: Math.max(...values) };
}

/** A small deterministic PRNG, so every backend sees the same work times. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export async function resultLatency(backend: BackendInstance, options: LatencyOptions): Promise<LatencyResult> {
  const opened = await backend.openStore();
  const { probe } = opened;
  probe.trackRuns = true;
  const engine = benchEngine(probe.store, { concurrency: 10 });
  await engine.start();
  // The polling client: its store seen without signals, so it polls as the figures below say (the
  // engine over the probe sends no completion signal; the pushed case is the `results` scenario).
  const client = benchEngine(countingStore(await opened.peer(), { without: ['signals'] }));
  await client.start({ workers: false });
  try {
    const measure = async (waiter: typeof engine, seed: number): Promise<number[]> => {
      const random = prng(seed);
      const out: number[] = [];
      for (let i = -options.warmup; i < options.samples; i++) {
        const work = Math.round(random() * options.maxWorkMs);
        const since = nowMs();
        const handle = await engine.startRun(latencyWorkflow, work, { mode: 'inline' });
        await waiter.result(handle.id);
        const resolved = nowMs();
        // A polling client on its own connection can read the completed run before the executing
        // engine has processed the reply to its own write: completion → result is then ~0.
        const finished = probe.finishedAt.get(handle.id) ?? (await probe.execution(handle.id, since)).endedAt;
        if (i >= 0) out.push(Math.max(0, resolved - finished));
      }
      return out;
    };
    const reads = () => probe.count('runs.get');
    const readsBefore = reads();
    const sameProcess = stats(await measure(engine, 1));
    const inlineReads = (reads() - readsBefore) / (options.samples + options.warmup);
    const polling = stats(await measure(client, 1));
    // The documented call as users make it: result() is called right away and waits.
    const tenSteps = async (mode: 'inline' | 'queued') => {
      const samples = await repeat(options.warmup, options.reps, async () => {
        const t0 = nowMs();
        const handle = await engine.startRun(stepsWorkflow, 10, { mode });
        await handle.result();
        const t1 = nowMs();
        const finished = probe.finishedAt.get(handle.id) ?? (await probe.execution(handle.id, t0)).endedAt;
        return { total: t1 - t0, lag: Math.max(0, t1 - finished) };
      });
      return { total: median(samples.map((s) => s.total)), lag: Math.max(...samples.map((s) => s.lag)) };
    };
    const inline = await tenSteps('inline');
    const queuedBefore = reads();
    const queued = await tenSteps('queued');
    const queuedReads = (reads() - queuedBefore) / (options.reps + options.warmup);
    return {
      sameProcess,
      polling,
      inlineStartToResultMs: inline.total,
      queuedStartToResultMs: queued.total,
      tenStepWorstLagMs: Math.max(inline.lag, queued.lag),
      tenStepReps: options.reps,
      readsPerResult: { inline: inlineReads, queued: queuedReads },
    };
  } finally {
    probe.trackRuns = false;
    await client.stop();
    await engine.stop();
    await opened.close();
  }
}
