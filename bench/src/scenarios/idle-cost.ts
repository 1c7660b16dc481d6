import { ManualClock } from '@cairn/core/testing';
import type { BackendInstance } from '../backends/types.js';
import { sleep } from '../stats.js';
import { benchEngine } from './workflows.js';

export interface IdleCostResult {
  /** The engine's recovery interval: its only timer while idle. */
  recoveryIntervalMs: number;
  /** Recovery passes driven (clock time idleMs = passes × interval). */
  passes: number;
  /** Requests (driver round trips; store calls on memory) per recovery pass of an engine with workers. */
  requestsPerPass: number;
  /** The same per second at the default interval. */
  requestsPerSecond: number;
  /** Requests of an engine without workers over the same clock time. */
  clientRequests: number;
}

const INTERVAL_MS = 2000;

/**
 * What an idle engine costs its store, counted, not timed: an engine with workers and one without,
 * on a `ManualClock` moved through `passes` recovery intervals with nothing to do. (A store with
 * signals also holds one idle listening connection, which sends nothing.)
 */
export async function idleCost(backend: BackendInstance, passes: number): Promise<IdleCostResult> {
  const opened = await backend.openStore();
  const clock = new ManualClock();
  const worker = benchEngine(opened.probe.store, { clock, recoveryIntervalMs: INTERVAL_MS });
  const client = benchEngine(opened.probe.store, { clock, recoveryIntervalMs: INTERVAL_MS });
  try {
    await worker.start();
    await client.start({ workers: false });
    // Let start-up requests settle, then count.
    await sleep(50);
    const before = backend.counter.snapshot().total;
    for (let i = 0; i < passes; i++) {
      await clock.advance(INTERVAL_MS);
      // The pass is a real round trip: wait for it to come back before moving the clock again.
      await sleep(20);
    }
    const total = backend.counter.snapshot().total - before;
    await worker.stop();
    // The engine without workers alone: no timer of its own.
    const clientBefore = backend.counter.snapshot().total;
    for (let i = 0; i < passes; i++) await clock.advance(INTERVAL_MS);
    await sleep(20);
    const clientRequests = backend.counter.snapshot().total - clientBefore;
    return {
      recoveryIntervalMs: INTERVAL_MS,
      passes,
      requestsPerPass: total / passes,
      requestsPerSecond: (total / passes) * (1000 / INTERVAL_MS),
      clientRequests,
    };
  } finally {
    await worker.stop();
    await client.stop();
    await opened.close();
  }
}
