import type { BackendInstance } from '../backends/types.js';
import { totalCalls } from '../instrument/counting-store.js';
import { allEqual, median, nowMs, repeat } from '../stats.js';
import { benchEngine, noop, stepsWorkflow } from './workflows.js';

export interface InlineSize {
  steps: number;
  /** Median wall time of `startRun(..., { mode: 'inline' })`, the execution, and one `result()` after it ended. */
  startToResultMs: number;
  /** Median time from the claim to the final run transition (the execution alone). */
  executionMs: number;
  /** steps / executionMs. */
  stepsPerSecond: number;
  /** executionMs / steps, in microseconds. */
  usPerStep: number;
  /** The same steps as plain awaited async calls, per step, in microseconds. */
  plainUsPerStep: number;
  /** usPerStep / plainUsPerStep. */
  overheadRatio: number;
  /** Driver round trips of the whole run (create + execution), and of the execution alone. */
  roundTripsPerRun: number;
  executionRoundTrips: number;
  storeCallsPerRun: number;
  /** Write transactions of the whole run (PostgreSQL: xids assigned), when the backend can tell. */
  writeTransactionsPerRun?: number;
  /** Transactions that asked for an asynchronous commit. */
  asyncCommitsPerRun: number;
  /** Whether every repetition made the same number of round trips (it must: the work is deterministic). */
  deterministic: boolean;
  /** Round trips of the execution by store method, and by request kind. */
  executionByMethod: Record<string, number>;
  executionByKind: Record<string, number>;
  /** Median milliseconds spent awaiting each `steps.*` store method over the whole run. */
  stepStoreMs: Record<string, number>;
}

export interface InlineResult {
  sizes: InlineSize[];
  /** (large − small) / (stepsLarge − stepsSmall): what one more step costs. */
  roundTripsPerStep: number;
  storeCallsPerStep: number;
  writeTransactionsPerStep?: number;
  asyncCommitsPerStep: number;
  byMethodPerStep: Record<string, number>;
  /** Per step by request kind (SQL verb, Redis/MongoDB command). */
  byKindPerStep: Record<string, number>;
  /**
   * Where the time of one step goes, in microseconds, at the largest size: awaiting each store
   * method (client side, driver included), and the rest (the engine itself).
   */
  usPerStepByMethod: Record<string, number>;
}

export interface InlineOptions {
  sizes: readonly number[];
  warmup: number;
  reps: number;
  /** A monotonic count of write transactions on the server (PostgreSQL), if the backend has one. */
  writeTransactions?: () => Promise<number>;
}

/** Plain awaited calls of the same no-op body: microseconds per call (median of batches). */
export function plainCallUs(steps: number): Promise<number> {
  const run = async () => {
    for (let i = 0; i < steps; i++) await noop();
  };
  return (async () => {
    const loops = Math.max(50, Math.ceil(200_000 / steps));
    for (let i = 0; i < loops; i++) await run();
    const batches: number[] = [];
    for (let b = 0; b < 7; b++) {
      const t0 = nowMs();
      for (let i = 0; i < loops; i++) await run();
      batches.push(((nowMs() - t0) * 1000) / (loops * steps));
    }
    return median(batches);
  })();
}

/** Sequential runs of N no-op inline steps, through the documented API. */
export async function inlineSteps(backend: BackendInstance, options: InlineOptions): Promise<InlineResult> {
  const opened = await backend.openStore();
  const { probe } = opened;
  const engine = benchEngine(probe.store, { startMode: 'inline' });
  await engine.start({ workers: false });
  const sizes: InlineSize[] = [];
  try {
    for (const steps of options.sizes) {
      const samples = await repeat(options.warmup, options.reps, async () => {
        const rt0 = backend.counter.snapshot();
        const calls0 = totalCalls(probe.callSnapshot());
        const time0 = probe.timeSnapshot();
        const tx0 = options.writeTransactions ? await options.writeTransactions() : 0;
        const t0 = nowMs();
        const handle = await engine.startRun(stepsWorkflow, steps, { mode: 'inline' });
        // Wait for the execution to end before asking for the result, so that no result poll
        // runs during the execution and every round trip in the window is the execution's own.
        const w = await probe.execution(handle.id, t0);
        const output = await handle.result();
        const t1 = nowMs();
        if (output !== steps) throw new Error(`bench-steps returned ${String(output)}`);
        const tx1 = options.writeTransactions ? await options.writeTransactions() : 0;
        const rt = backend.counter.snapshot();
        const time1 = probe.timeSnapshot();
        const spent: Record<string, number> = {};
        for (const [m, v] of Object.entries(time1)) if (m.startsWith('steps.')) spent[m] = v - (time0[m] ?? 0);
        return {
          spent,
          ms: t1 - t0,
          execMs: w.endedAt - w.startedAt,
          rt: rt.total - rt0.total,
          async: rt.asyncCommits - rt0.asyncCommits,
          execRt: w.roundTrips.total,
          byMethod: w.roundTrips.byMethod,
          byKind: w.roundTrips.byKind,
          calls: totalCalls(probe.callSnapshot()) - calls0,
          tx: tx1 - tx0,
        };
      });
      const ms = median(samples.map((s) => s.ms));
      const execMs = median(samples.map((s) => s.execMs));
      const plain = await plainCallUs(steps);
      const usPerStep = (execMs * 1000) / steps;
      const size: InlineSize = {
        steps,
        startToResultMs: ms,
        executionMs: execMs,
        stepsPerSecond: steps / (execMs / 1000),
        usPerStep,
        plainUsPerStep: plain,
        overheadRatio: usPerStep / plain,
        roundTripsPerRun: median(samples.map((s) => s.rt)),
        executionRoundTrips: median(samples.map((s) => s.execRt)),
        storeCallsPerRun: median(samples.map((s) => s.calls)),
        asyncCommitsPerRun: median(samples.map((s) => s.async)),
        deterministic: allEqual(samples.map((s) => s.execRt)),
        executionByMethod: samples[samples.length - 1]!.byMethod,
        executionByKind: samples[samples.length - 1]!.byKind,
        stepStoreMs: Object.fromEntries(Object.keys(samples[0]!.spent).map((m) => [m, median(samples.map((x) => x.spent[m] ?? 0))])),
      };
      if (options.writeTransactions) size.writeTransactionsPerRun = median(samples.map((s) => s.tx));
      sizes.push(size);
    }
  } finally {
    await engine.stop();
    await opened.close();
  }
  const small = sizes[0]!;
  const large = sizes[sizes.length - 1]!;
  const dn = large.steps - small.steps;
  const byMethodPerStep: Record<string, number> = {};
  for (const method of new Set([...Object.keys(small.executionByMethod), ...Object.keys(large.executionByMethod)])) {
    const d = ((large.executionByMethod[method] ?? 0) - (small.executionByMethod[method] ?? 0)) / dn;
    if (d !== 0) byMethodPerStep[method] = d;
  }
  const perStep = (a: Record<string, number>, b: Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = ((b[key] ?? 0) - (a[key] ?? 0)) / dn;
      if (d !== 0) out[key] = d;
    }
    return out;
  };
  const usPerStepByMethod: Record<string, number> = {};
  let storeUs = 0;
  for (const [m, v] of Object.entries(large.stepStoreMs)) {
    usPerStepByMethod[m] = (v * 1000) / large.steps;
    storeUs += usPerStepByMethod[m];
  }
  usPerStepByMethod['engine (rest)'] = large.usPerStep - storeUs;
  const result: InlineResult = {
    usPerStepByMethod,
    byKindPerStep: perStep(small.executionByKind, large.executionByKind),
    sizes,
    roundTripsPerStep: (large.executionRoundTrips - small.executionRoundTrips) / dn,
    storeCallsPerStep: (large.storeCallsPerRun - small.storeCallsPerRun) / dn,
    asyncCommitsPerStep: (large.asyncCommitsPerRun - small.asyncCommitsPerRun) / dn,
    byMethodPerStep,
  };
  if (small.writeTransactionsPerRun !== undefined && large.writeTransactionsPerRun !== undefined) {
    result.writeTransactionsPerStep = (large.writeTransactionsPerRun - small.writeTransactionsPerRun) / dn;
  }
  return result;
}
