import type { BackendInstance } from '../backends/types.js';
import { totalCalls, type ExecutionWindow } from '../instrument/counting-store.js';
import { allEqual, median, nowMs, repeat } from '../stats.js';
import { benchEngine, replayWorkflow } from './workflows.js';

export interface ReplaySize {
  /** Finished steps in the run when it is resumed. */
  steps: number;
  /** Median time of one resume: claim, one read of everything, replay, suspend again. */
  resumeMs: number;
  /** resumeMs / steps, in microseconds. */
  usPerFinishedStep: number;
  /** Driver round trips of one resume, in total and those made by `steps.load`. */
  roundTrips: number;
  stepReadRoundTrips: number;
  /** Calls of `steps.load` per resume (store level). */
  stepLoads: number;
  storeCalls: number;
  byMethod: Record<string, number>;
  byKind: Record<string, number>;
  deterministic: boolean;
  /** How long recording the steps took (context, not a result). */
  recordMs: number;
}

export interface ReplayResult {
  sizes: ReplaySize[];
  /** resumeMs(largest) / resumeMs(second largest): ~2 when replay is linear in the run's length. */
  growthRatio: number;
  /** Slope between the two largest sizes, microseconds per finished step. */
  usPerFinishedStepSlope: number;
}

export interface ReplayOptions {
  sizes: readonly number[];
  warmup: number;
  reps: number;
}

/**
 * Replay cost as the run grows. Each run records N no-op steps and then sleeps for a day. It is
 * then resumed repeatedly: an event is sent (which wakes the run), the local queue hands it to this
 * process's orchestrator worker, and the execution window — from `runs.claim` to the transition
 * back to `waiting` — is timed and its driver round trips counted. Sending the event and the queue
 * hop are outside the window.
 */
export async function replayGrowth(backend: BackendInstance, options: ReplayOptions): Promise<ReplayResult> {
  const opened = await backend.openStore();
  const { probe } = opened;
  // Every wake replays: a kept execution (issue 30) would resume without the replay this measures.
  const engine = benchEngine(probe.store, { concurrency: 1, stickyExecutions: false });
  await engine.start();
  const sizes: ReplaySize[] = [];
  try {
    for (const steps of options.sizes) {
      const r0 = nowMs();
      const handle = await engine.startRun(replayWorkflow, steps, { mode: 'inline' });
      const recorded = await probe.execution(handle.id, r0);
      if (recorded.status !== 'waiting') throw new Error(`replay run ended ${recorded.status} instead of waiting`);
      const recordMs = recorded.endedAt - r0;
      let poke = 0;
      const samples: ExecutionWindow[] = await repeat(options.warmup, options.reps, async () => {
        const since = nowMs();
        const sent = await engine.sendEvent(handle.id, `poke-${++poke}`);
        if (!sent.delivered) throw new Error('poke not delivered');
        const w = await probe.execution(handle.id, since);
        if (w.status !== 'waiting') throw new Error(`replay ended ${w.status} instead of waiting`);
        return w;
      });
      const resumeMs = median(samples.map((w) => w.endedAt - w.startedAt));
      const last = samples[samples.length - 1]!;
      sizes.push({
        steps,
        resumeMs,
        usPerFinishedStep: (resumeMs * 1000) / steps,
        roundTrips: median(samples.map((w) => w.roundTrips.total)),
        stepReadRoundTrips: median(samples.map((w) => w.roundTrips.byMethod['steps.load'] ?? 0)),
        stepLoads: median(samples.map((w) => w.storeCalls['steps.load'] ?? 0)),
        storeCalls: median(samples.map((w) => totalCalls(w.storeCalls))),
        byMethod: last.roundTrips.byMethod,
        byKind: last.roundTrips.byKind,
        deterministic: allEqual(samples.map((w) => w.roundTrips.total)),
        recordMs,
      });
    }
  } finally {
    await engine.stop();
    await opened.close();
  }
  const a = sizes[sizes.length - 2]!;
  const b = sizes[sizes.length - 1]!;
  return {
    sizes,
    growthRatio: b.resumeMs / a.resumeMs,
    usPerFinishedStepSlope: ((b.resumeMs - a.resumeMs) * 1000) / (b.steps - a.steps),
  };
}
