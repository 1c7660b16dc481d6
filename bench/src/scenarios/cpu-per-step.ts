import type { Engine } from '@cairn/core';
import type { BackendInstance } from '../backends/types.js';
import { median } from '../stats.js';
import { benchEngine, inlineRun, stepsWorkflow } from './workflows.js';

/** Client CPU of one store state (young, or filled: holding `finishedRuns` finished runs). */
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

/** The first steps of a fresh engine, while V8 still compiles its code, and the warm-up after them. */
export interface CpuWarmUp {
  /** Steps run on the fresh engine before anything else (`CpuOptions.coldSteps`). */
  coldSteps: number;
  /** CPU per step over those first steps, µs: what a process pays once, before its code is compiled. */
  coldUsPerStep: number;
  /** Repetitions of warm-up after them, until a repetition stopped getting cheaper. */
  reps: number;
  /** Steps of warm-up in all, cold ones included. */
  steps: number;
}

export interface CpuResult {
  /** Steps per run (the run's create, claim and completion are included in its steps' share). */
  steps: number;
  /** Sequential runs per repetition. */
  runs: number;
  /** How the engine's code was warmed before `empty` was measured. */
  warmUp?: CpuWarmUp;
  empty: CpuSample;
  filled: CpuSample;
}

export interface CpuOptions {
  steps: number;
  runs: number;
  /** Steps measured first, on the fresh engine (the cold figure); a multiple of `steps`. */
  coldSteps: number;
  /** Warm-up steps after the cold ones: at least `warmUpSteps`, at most `maxWarmUpSteps` (see `warmUp`). */
  warmUpSteps: number;
  maxWarmUpSteps: number;
  /** Repetitions run again, unmeasured, before each measurement (filling the store ran other code). */
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

/**
 * Warms the engine's code up before anything is measured. V8 compiles a function with its
 * optimising tiers only after it ran many times with the same shapes: measured on the memory store,
 * the first ~5,000 steps of a process cost 3-8 times what a step costs once ~40,000 ran (43 µs
 * against 6-10 µs), which a long-running worker pays once; a stop rule on "no longer getting
 * cheaper" alone stopped at 15,000 steps on a busy machine, still 2× too dear. So the cold cost is
 * reported on its own (`coldSteps` on the fresh engine), then at least `warmUpSteps` more run, and
 * on until a repetition stopped getting cheaper — the median of the last five no more than 10 %
 * below the median of the five before — or `maxWarmUpSteps` ran.
 */
async function warmUp(engine: Engine, options: CpuOptions): Promise<CpuWarmUp> {
  const coldRuns = Math.max(1, Math.round(options.coldSteps / options.steps));
  const coldUsPerStep = (await cpuOfRuns(engine, coldRuns, options.steps)) / (coldRuns * options.steps);
  const perRep: number[] = [];
  const perRepSteps = options.runs * options.steps;
  const minReps = Math.ceil(options.warmUpSteps / perRepSteps);
  const maxReps = Math.max(minReps, Math.ceil(options.maxWarmUpSteps / perRepSteps));
  while (perRep.length < maxReps) {
    perRep.push((await cpuOfRuns(engine, options.runs, options.steps)) / perRepSteps);
    if (perRep.length >= Math.max(minReps, 10) && median(perRep.slice(-5)) >= 0.9 * median(perRep.slice(-10, -5))) break;
  }
  return { coldSteps: coldRuns * options.steps, coldUsPerStep, reps: perRep.length, steps: (coldRuns + perRep.length * options.runs) * options.steps };
}

/** Measures `reps` repetitions after `warmup` more; `finishedBefore`: runs the store held before them. */
async function measure(engine: Engine, options: CpuOptions, finishedBefore: number): Promise<CpuSample> {
  // The filled store's measurement warms up again briefly: filling ran other code (one-step runs).
  for (let i = 0; i < options.warmup; i++) await cpuOfRuns(engine, options.runs, options.steps);
  const finishedRuns = finishedBefore + options.warmup * options.runs;
  const samples: number[] = [];
  for (let i = 0; i < options.reps; i++) samples.push((await cpuOfRuns(engine, options.runs, options.steps)) / (options.runs * options.steps));
  const mean = samples.reduce((sum, x) => sum + x, 0) / samples.length;
  return { finishedRuns, usPerStep: mean, medianUsPerStep: median(samples), samples };
}

/**
 * Engine CPU per inline step, client side (engine, store client code and driver; not the server):
 * `process.cpuUsage()` (user + system) around sequential 100-step inline runs (`startRun` +
 * `result()`), divided by the steps: the first `coldSteps` of the fresh engine, then — once its
 * code is warm (`warmUp`) — on the young store and again after `fill` more runs finished in it.
 * The store is opened uncounted (as an application opens it): the bench's round-trip counting
 * would add its own CPU.
 */
export async function cpuPerStep(backend: BackendInstance, options: CpuOptions): Promise<CpuResult> {
  const opened = await backend.openStore();
  const store = await opened.peer();
  const engine = benchEngine(store, { startMode: 'inline' });
  await engine.start({ workers: false });
  try {
    const warm = await warmUp(engine, options);
    const empty = await measure(engine, options, warm.steps / options.steps);
    const afterEmpty = empty.finishedRuns + options.reps * options.runs;
    // Fill: one-step runs, 16 in flight (the state of the store is what matters, not how fast).
    let left = options.fill;
    await Promise.all(
      Array.from({ length: Math.min(16, options.fill) }, async () => {
        while (left > 0) {
          left -= 1;
          await inlineRun(engine, 1);
        }
      }),
    );
    const filled = await measure(engine, options, afterEmpty + options.fill);
    return { steps: options.steps, runs: options.runs, warmUp: warm, empty, filled };
  } finally {
    await engine.stop();
    await opened.close();
  }
}
