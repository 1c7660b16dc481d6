import type { Engine } from '@cairn/core';
import type { BackendInstance } from '../backends/types.js';
import type { ExecutionWindow, StoreProbe } from '../instrument/counting-store.js';
import { median, nowMs } from '../stats.js';
import { benchEngine, wakeWorkflow } from './workflows.js';

/** One wake of a run suspended after `steps` recorded steps (medians over the repetitions). */
export interface WakeSize {
  steps: number;
  /** CPU of this process from `sendEvent` to the execution's transition back to `waiting`, µs. */
  cpuUs: number;
  /** The execution window: `runs.claim` to the transition back to `waiting`, ms. */
  wallMs: number;
  /** Bytes the store handed back in the window (every call's result as JSON). */
  bytesRead: number;
  /** Step records `steps.load` handed back in the window. */
  stepsRead: number;
  /** Store calls in the window. */
  storeCalls: number;
}

/** A run that waits for an event `waits` times in a row, each woken in turn. */
export interface WakeLoop {
  waits: number;
  /** CPU of this process per iteration (send, wake, suspend again), µs: the mean over all of them. */
  cpuUsPerIteration: number;
  /** Wall time per iteration (send to suspended again), ms: the mean. */
  wallMsPerIteration: number;
  /** Bytes the store handed back per iteration, mean. */
  bytesPerIteration: number;
}

/** One engine configuration: executions kept between wakes (sticky) or replayed on every wake. */
export interface WakeVariant {
  sticky: boolean;
  sizes: WakeSize[];
  loops: WakeLoop[];
}

export interface WakeResult {
  variants: WakeVariant[];
}

export interface WakeOptions {
  /** History lengths to wake at (the first is the short one the others are compared with). */
  sizes: number[];
  /** Loop lengths (the first is the short one). */
  loops: number[];
  warmup: number;
  reps: number;
}

/** Sends one `poke` and waits for the execution it causes to suspend again; CPU and the window. */
async function wakeOnce(engine: Engine, probe: StoreProbe, runId: string): Promise<{ cpuUs: number; w: ExecutionWindow }> {
  const since = nowMs();
  const c0 = process.cpuUsage();
  const sent = await engine.sendEvent(runId, 'poke');
  if (!sent.delivered) throw new Error('poke not delivered');
  const w = await probe.execution(runId, since);
  const c = process.cpuUsage(c0);
  if (w.status !== 'waiting' && w.status !== 'completed') throw new Error(`wake ended ${w.status}`);
  return { cpuUs: c.user + c.system, w };
}

/** Starts a wake run and waits until it first suspends. */
async function suspendedRun(engine: Engine, probe: StoreProbe, steps: number, waits: number): Promise<string> {
  const r0 = nowMs();
  const handle = await engine.startRun(wakeWorkflow, { steps, waits }, { mode: 'inline' });
  const first = await probe.execution(handle.id, r0);
  if (first.status !== 'waiting') throw new Error(`wake run ended ${first.status} instead of waiting`);
  return handle.id;
}

async function variant(backend: BackendInstance, sticky: boolean, options: WakeOptions): Promise<WakeVariant> {
  const opened = await backend.openStore();
  const { probe } = opened;
  probe.countBytes = true;
  const engine = benchEngine(probe.store, { concurrency: 1, ...(sticky ? {} : { stickyExecutions: false }) });
  await engine.start();
  const sizes: WakeSize[] = [];
  const loops: WakeLoop[] = [];
  try {
    for (const steps of options.sizes) {
      const runId = await suspendedRun(engine, probe, steps, options.warmup + options.reps + 1);
      const samples: { cpuUs: number; w: ExecutionWindow }[] = [];
      for (let i = 0; i < options.warmup + options.reps; i++) {
        const sample = await wakeOnce(engine, probe, runId);
        if (i >= options.warmup) samples.push(sample);
      }
      sizes.push({
        steps,
        cpuUs: median(samples.map((s) => s.cpuUs)),
        wallMs: median(samples.map((s) => s.w.endedAt - s.w.startedAt)),
        bytesRead: median(samples.map((s) => s.w.bytesRead)),
        stepsRead: median(samples.map((s) => s.w.stepsRead)),
        storeCalls: median(samples.map((s) => Object.values(s.w.storeCalls).reduce((a, b) => a + b, 0))),
      });
    }
    for (const waits of options.loops) {
      const runId = await suspendedRun(engine, probe, 0, waits);
      let cpuUs = 0;
      let bytes = 0;
      const t0 = nowMs();
      for (let i = 0; i < waits; i++) {
        const { cpuUs: c, w } = await wakeOnce(engine, probe, runId);
        cpuUs += c;
        bytes += w.bytesRead;
      }
      loops.push({ waits, cpuUsPerIteration: cpuUs / waits, wallMsPerIteration: (nowMs() - t0) / waits, bytesPerIteration: bytes / waits });
    }
  } finally {
    await engine.stop();
    await opened.close();
  }
  return { sticky, sizes, loops };
}

/**
 * Wake cost against history length (issue 30). A run records N no-op steps and waits for an event;
 * each wake (an event sent through `engine.sendEvent`, the local queue handing the run to this
 * process's worker) lets it record one more wait and suspend again. Measured per wake: this
 * process's CPU from the send to the suspension, the execution window, the bytes the store handed
 * back and the step records read. Then a run waiting K times in a row: the cost per iteration.
 * Both with executions kept between wakes (the default) and with `stickyExecutions: false` (a
 * replay per wake, as before), side by side on the same store.
 */
export async function wakeCost(backend: BackendInstance, options: WakeOptions): Promise<WakeResult> {
  return { variants: [await variant(backend, true, options), await variant(backend, false, options)] };
}
