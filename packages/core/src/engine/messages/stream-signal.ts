import type { EngineRuntime } from '../engine-runtime.js';
import { STREAM_TOPIC } from './stream-limits.js';

/**
 * Tells readers in other processes that the run's streams have a new entry (a chunk, an end marker,
 * a request's reply), through the store's signals when it has them. Never throws: a lost signal
 * costs a reader its re-read interval, never the entry.
 */
export function signalStreamWrite(rt: EngineRuntime, runId: string): void {
  const signals = rt.store.signals;
  if (signals === undefined) return;
  signals.notify(STREAM_TOPIC, runId).catch((error: unknown) => {
    rt.logger.debug?.({ runId, err: error }, `Run ${runId}: a stream signal failed; readers find the entry by their re-read`);
  });
}
