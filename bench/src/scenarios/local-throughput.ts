import type { BackendInstance } from '../backends/types.js';
import { median, nowMs } from '../stats.js';
import { benchEngine, queuedWorkflow } from './workflows.js';

export interface LocalThroughputResult {
  runs: number;
  stepsPerRun: number;
  concurrency: number;
  /** Median runs per second over the repetitions, submit of the first → completion of the last. */
  runsPerSecond: number;
}

export interface LocalThroughputOptions {
  runs: number;
  steps: number;
  concurrency: number;
  reps: number;
}

/** Queued runs through the in-process local queue, one process (`startRun` default mode). */
export async function localThroughput(backend: BackendInstance, options: LocalThroughputOptions): Promise<LocalThroughputResult> {
  const opened = await backend.openStore();
  const { probe } = opened;
  probe.trackRuns = true;
  const engine = benchEngine(probe.store, { concurrency: options.concurrency, recovering: true });
  await engine.start();
  const rates: number[] = [];
  try {
    for (let rep = -1; rep < options.reps; rep++) {
      // The warm-up (rep -1) is a tenth of the size.
      const runs = rep < 0 ? Math.max(1, Math.ceil(options.runs / 10)) : options.runs;
      const t0 = nowMs();
      const handles = [];
      for (let i = 0; i < runs; i++) handles.push(await engine.startRun(queuedWorkflow, { steps: options.steps }));
      await Promise.all(handles.map((h) => h.result()));
      const last = Math.max(...handles.map((h) => probe.finishedAt.get(h.id) ?? Number.NaN));
      if (rep >= 0) rates.push(options.runs / ((last - t0) / 1000));
    }
  } finally {
    probe.trackRuns = false;
    await engine.stop();
    await opened.close();
  }
  return { runs: options.runs, stepsPerRun: options.steps, concurrency: options.concurrency, runsPerSecond: median(rates) };
}
