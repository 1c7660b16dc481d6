import { createMemoryStore } from '@cairn/core';
import type { MemoryStoreOptions } from '@cairn/core/backend';
import type { ConformanceHarness } from './harness.js';

/**
 * The harness of `@cairn/core`'s in-memory reference store: a fresh store per namespace, nothing to
 * start. It is in-process, so the cases that need several processes on one namespace are skipped.
 * Also a minimal example of a harness.
 */
export function memoryHarness(options: MemoryStoreOptions = {}): ConformanceHarness {
  return {
    name: 'memory',
    source: 'in-process memory store from @cairn/core',
    capabilities: { multiProcess: false },
    async createStore() {
      return createMemoryStore(options);
    },
    // The memory store keeps everything in one object per run: once the store stops answering for a
    // run through every read of the contract, nothing of it is left.
    async artefactsOf(store, _namespace, runId) {
      const left: string[] = [];
      const run = await store.runs.get(runId);
      if (run) left.push(`run ${run.id} (${run.status})`);
      for (const step of await store.steps.load(runId)) left.push(`step ${step.key}`);
      for (const attempt of await store.history.list(runId)) left.push(`attempt ${attempt.stepKey}#${attempt.attempt}`);
      for (const key of Object.keys(await store.state.get(runId))) left.push(`state ${key}`);
      return left;
    },
    // The memory store holds exactly what its API hands back (copies of what was written), so its
    // raw contents are every record read through it: runs, steps, attempts, state and schedules.
    // Event messages cannot be listed without their names; a waited message is also the output
    // of its event step.
    async rawContents(store) {
      const out: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.runs.list({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
        for (const { id } of page.runs) {
          const parts = [await store.runs.get(id), await store.steps.load(id), await store.history.list(id), await store.state.get(id)];
          out.push(...parts.map((part) => `run ${id}: ${JSON.stringify(part)}`));
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      for (const schedule of await store.schedules.list({ limit: 1000 })) out.push(`schedule ${JSON.stringify(schedule)}`);
      return out;
    },
  };
}
