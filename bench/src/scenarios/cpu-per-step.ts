import type { Engine } from '@cairn/core';
import type { BackendInstance } from '../backends/types.js';
import { median } from '../stats.js';
import { benchEngine, stepsWorkflow } from './workflows.js';

/** Client CPU of one store state (empty, or holding `finishedRuns` finished runs). */
export interface CpuSample {
  /** Finished runs the store held while measuring. */
  finishedRuns: number;
  /**
   * (user + system CPU of this process) / steps over all repetitions together, in microseconds:
   * the mean, garbage collection included. A median of repetitions would drop the repetitions a
   * major collection landed in, and that collection is a cost of the steps all the same.
   */
  usPerStep: number;
  /** Median over repetitions of the same figure: what a step costs between collections. */
  medianUsPerStep?: number;
  /** Every repetition's figure, for the spread. */
  samples: number[];
}

export interface CpuResult {
  /** Steps per run (the run's create, claim and completion are included in its steps' share). */
  steps: number;
  /** Sequential runs per repetition. */
  runs: number;
  empty: CpuSample;
  filled: CpuSample;
}

export interface CpuOptions {
  steps: number;
  runs: number;
  warmup: number;
  reps: number;
  /** Finished runs written before the second measurement. */
  fill: number;
}

/** `runs` sequential inline runs of `steps` no-op steps; returns the CPU they cost this process, µs. */
async function cpuOfRuns(engine: Engine, runs: number, steps: number): Promise<number> {
  const c0 = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    const handle = await engine.startRun(stepsWorkflow, steps, { mode: 'inline' });
    const output = await handle.result();
    if (output !== steps) throw new Error(`bench-steps returned ${String(output)}`);
  }
  const c = process.cpuUsage(c0);
  return c.user + c.system;
}

async function measure(engine: Engine, options: CpuOptions, finishedRuns: number): Promise<CpuSample> {
  for (let i = 0; i < options.warmup; i++) await cpuOfRuns(engine, options.runs, options.steps);
  const samples: number[] = [];
  for (let i = 0; i < options.reps; i++) samples.push((await cpuOfRuns(engine, options.runs, options.steps)) / (options.runs * options.steps));
  const mean = samples.reduce((sum, x) => sum + x, 0) / samples.length;
  return { finishedRuns, usPerStep: mean, medianUsPerStep: median(samples), samples };
}

/**
 * Engine CPU per inline step, client side (engine, store client code and driver; not the server):
 * `process.cpuUsage()` (user + system) around sequential 100-step inline runs (`startRun` +
 * `result()`), divided by the steps, on an empty store and again after `fill` more runs finished
 * in it. The store is opened uncounted (as an application opens it): the bench's round-trip
 * counting would add its own CPU.
 */
export async function cpuPerStep(backend: BackendInstance, options: CpuOptions): Promise<CpuResult> {
  const opened = await backend.openStore();
  const store = await opened.peer();
  const engine = benchEngine(store, { startMode: 'inline' });
  await engine.start({ workers: false });
  try {
    const empty = await measure(engine, options, 0);
    // Fill: one-step runs, 16 in flight (the state of the store is what matters, not how fast).
    let left = options.fill;
    await Promise.all(
      Array.from({ length: Math.min(16, options.fill) }, async () => {
        while (left > 0) {
          left -= 1;
          await (await engine.startRun(stepsWorkflow, 1, { mode: 'inline' })).result();
        }
      }),
    );
    const filled = await measure(engine, options, options.fill + (options.warmup + options.reps) * options.runs);
    return { steps: options.steps, runs: options.runs, empty, filled };
  } finally {
    await engine.stop();
    await opened.close();
  }
}
