import { randomUUID } from 'node:crypto';
import { countingStore } from '@cairn/core/backend';
import type { BackendInstance } from '../backends/types.js';
import { nowMs } from '../stats.js';
import { benchEngine } from './workflows.js';

export interface BulkCancelOptions {
  /** Pending runs created, then cancelled by one `engine.bulk`. */
  runs: number;
  /** The bulk operation's page size. */
  pageSize: number;
}

export interface BulkCancelResult {
  runs: number;
  pageSize: number;
  /** The dry run that counts them first, ms. */
  dryRunMs: number;
  /** The whole `engine.bulk` cancel, ms. */
  totalMs: number;
  runsPerSecond: number;
  /** Progress reports (one per page) and the time of the first one, ms from the start. */
  pages: number;
  firstProgressMs: number;
  /** Store calls per cancelled run (listing, requestCancel, record writes together). */
  storeCallsPerRun: number;
  /** Every run ended with `cancelRequested` (checked by listing them after). */
  allRequested: boolean;
}

// Runs are created straight in the store, this many at once: the scenario measures the bulk
// operation, not starts.
const CREATE_IN_FLIGHT = 16;

/**
 * Issue 32's target: a bulk cancel of 10,000 runs completes in ≤ 30 s on PostgreSQL and reports
 * progress. Creates `runs` pending runs of one workflow (and as many of another, which the filter
 * must leave alone), counts them with a dry run, then cancels them with one `engine.bulk` from an
 * engine that was never started (an operator's process), timing it and its progress reports.
 */
export async function bulkCancel(backend: BackendInstance, options: BulkCancelOptions): Promise<BulkCancelResult> {
  const opened = await backend.openStore();
  const store = countingStore(await opened.peer(), { history: false });
  const now = Date.now();
  const create = async (workflow: string, n: number) => {
    let next = 0;
    const lane = async () => {
      while (next < n) {
        next += 1;
        await store.runs.create({ id: randomUUID(), workflow, version: '1', input: null, wakeAt: now + 3_600_000 }, now);
      }
    };
    await Promise.all(Array.from({ length: CREATE_IN_FLIGHT }, lane));
  };
  await create('bench-bulk', options.runs);
  await create('bench-bulk-other', Math.min(options.runs, 1000));
  const engine = benchEngine(store);
  try {
    const dryStarted = nowMs();
    const dry = await engine.bulk({ filter: { workflow: 'bench-bulk' }, action: 'cancel', dryRun: true });
    const dryRunMs = nowMs() - dryStarted;
    if (dry.counts.matched !== options.runs) throw new Error(`bulk dry run matched ${dry.counts.matched} of ${options.runs} runs`);
    store.reset();
    let pages = 0;
    let firstProgressMs = 0;
    const started = nowMs();
    const result = await engine.bulk({
      filter: { workflow: 'bench-bulk' },
      action: 'cancel',
      pageSize: options.pageSize,
      onProgress: () => {
        pages += 1;
        if (pages === 1) firstProgressMs = nowMs() - started;
      },
    });
    const totalMs = nowMs() - started;
    const calls = Object.values(store.counts()).reduce((a, b) => a + b, 0);
    if (result.counts.done !== options.runs)
      throw new Error(`bulk cancel did ${result.counts.done} of ${options.runs} runs (${JSON.stringify(result.counts)})`);
    let requested = 0;
    let untouchedOthers = true;
    for (const workflow of ['bench-bulk', 'bench-bulk-other']) {
      let cursor: string | undefined;
      do {
        const page = await store.runs.list({ workflow, limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
        for (const run of page.runs) {
          if (workflow === 'bench-bulk' && run.cancelRequested) requested += 1;
          if (workflow !== 'bench-bulk' && run.cancelRequested) untouchedOthers = false;
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    }
    return {
      runs: options.runs,
      pageSize: options.pageSize,
      dryRunMs,
      totalMs,
      runsPerSecond: options.runs / (totalMs / 1000),
      pages,
      firstProgressMs,
      storeCallsPerRun: calls / options.runs,
      allRequested: requested === options.runs && untouchedOthers,
    };
  } finally {
    await engine.stop();
  }
}
