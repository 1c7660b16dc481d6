// The memory store's promised wake-ups (`runs.promiseWake` / `keepPromise`, decision 78): kept on
// the run's entry apart from `wakeAt`, and what a claim leaves of them.
import { isTerminalRunStatus } from '../model/run.js';
import type { RunStore } from '../store/workflow-store.js';
import type { MemoryData, RunEntry } from './memory-data.js';

type RunPromises = Required<Pick<RunStore, 'promiseWake' | 'keepPromise'>>;

/** `promiseWake` and `keepPromise` over the memory store's data. */
export function memoryRunPromises(data: MemoryData): RunPromises {
  return {
    async promiseWake(runId, at, now) {
      const e = data.entry(runId);
      if (!e || isTerminalRunStatus(e.run.status)) return;
      data.wakeEntry(e, at);
      e.run.updatedAt = now;
      e.promisedAt = e.promisedAt === undefined ? at : Math.min(e.promisedAt, at);
      e.promises = (e.promises ?? 0) + 1;
    },

    async keepPromise(runId, now) {
      const e = data.entry(runId);
      if (!e || isTerminalRunStatus(e.run.status)) return;
      data.wakeEntry(e, now);
      const left = (e.promises ?? 0) - 1;
      if (left > 0) e.promises = left;
      else {
        e.promises = undefined;
        e.promisedAt = undefined;
      }
    },
  };
}

/**
 * The `wakeAt` a claim at `now` leaves (`undefined`: none), forgetting a promise whose time came. A
 * due wake-up is news the claimer sees by replaying; one asked for later, or an outstanding promise
 * later than now (a child's pre-wake), is what the next suspension must keep. A pending run's
 * `wakeAt` is its start grace.
 */
export function wakeAfterClaim(e: RunEntry, now: number): number | undefined {
  const kept = e.run.status !== 'pending' && e.run.wakeAt !== undefined && e.run.wakeAt > now ? e.run.wakeAt : undefined;
  const promised = e.promisedAt !== undefined && e.promisedAt > now ? e.promisedAt : undefined;
  if (promised === undefined) {
    e.promisedAt = undefined;
    e.promises = undefined;
  }
  return kept === undefined ? promised : promised === undefined ? kept : Math.min(kept, promised);
}
