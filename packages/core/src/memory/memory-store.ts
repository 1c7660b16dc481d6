// The reference store, in process memory: assembled from its parts, each given the one MemoryData
// they share (memory-data.ts).
import { createMemorySignals } from './memory-signals.js';
import { createMemorySlots } from './memory-slots.js';
import { createMemoryPauses } from './memory-pauses.js';
import { createMemoryBulk } from './memory-bulk.js';
import { withArgumentChecks } from '../store/check-store-arguments.js';
import type { WorkflowStore } from '../store/workflow-store.js';
import { MemoryData } from './memory-data.js';
import { memoryRunReads } from './memory-run-reads.js';
import { memoryRunChanges, memoryRunWrites } from './memory-run-writes.js';
import { memoryRunPromises } from './memory-run-promises.js';
import { memoryHistory, memorySteps } from './memory-steps.js';
import { memoryEvents, memoryState, memoryStreams } from './memory-run-data.js';
import { memorySchedules, memoryVersions } from './memory-catalog.js';

/** Options of `createMemoryStore`. */
export interface MemoryStoreOptions {
  /** Largest payload accepted, in bytes of UTF-8 JSON (default 16 MiB). */
  maxPayloadBytes?: number;
}

/**
 * The reference implementation of the store contract, in process memory. Every method is atomic
 * because it runs synchronously between awaits; it passes the whole conformance suite. Data lives
 * as long as the object: use it for tests and development, not production.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): WorkflowStore {
  const data = new MemoryData();
  // Arguments of the wrong runtime type are refused before they reach the maps, as on every backend.
  return withArgumentChecks({
    name: 'memory',
    capabilities: { multiProcess: false, maxPayloadBytes: options.maxPayloadBytes ?? 16 * 1024 * 1024, insertFinished: true },
    // Between engines sharing this object (the only "processes" a memory store has).
    signals: createMemorySignals(),
    runs: { ...memoryRunReads(data), ...memoryRunWrites(data), ...memoryRunPromises(data), ...memoryRunChanges(data) },
    streams: memoryStreams(data),
    steps: memorySteps(data),
    state: memoryState(data),
    events: memoryEvents(data),
    versions: memoryVersions(data),
    schedules: memorySchedules(data),
    slots: createMemorySlots(),
    bulk: createMemoryBulk(),
    pauses: createMemoryPauses({
      get: (runId) => data.entry(runId)?.run,
      set: (runId, run) => {
        const e = data.entry(runId);
        if (e) e.run = run;
      },
      wake: (runId, now) => {
        const e = data.entry(runId);
        if (e) data.wakeEntry(e, now);
      },
    }),
    history: memoryHistory(data),
    async close() {
      // Nothing to release: the maps go with the object.
    },
  });
}
