import type { Clock } from '../../clock/clock.js';
import { Wakeup } from '../wakeups/wakeup.js';
import { CairnError } from '../../errors/cairn-error.js';
import { isTerminalRunStatus } from '../../model/run.js';
import type { StreamChunk } from '../../model/stream.js';
import type { StreamStore, WorkflowStore } from '../../store/workflow-store.js';
import { IDENTIFIER_LIMITS, checkIdentifier, checkOptions, checkRunId } from '../check-input.js';
import { STREAM_TOPIC } from './stream-limits.js';

/** Options of `engine.readStream`. */
export interface ReadStreamOptions {
  /** The index of the first chunk to read (default 0): after chunk `i`, resume with `i + 1`. */
  from?: number;
  /** Ends the iteration (it throws the signal's reason) and frees what the reader held. */
  signal?: AbortSignal;
  /**
   * How often the reader looks at the store while no chunk comes, in ms: default 100 on a store
   * without signals, 1,000 (a safety net for a lost signal) on one with them. 10 to 60,000.
   */
  pollInterval?: number;
}

/** Chunks read per store read. */
const PAGE = 100;

export function streamsOf(store: WorkflowStore, what: string): StreamStore {
  if (store.streams === undefined) {
    throw new CairnError('STREAM_UNSUPPORTED', `${what}: the store ${store.name} has no streams`, { data: { store: store.name } });
  }
  return store.streams;
}

/**
 * `engine.readStream`: the chunks of the run's stream from `from`, then live ones until the stream
 * is closed or the run ends (docs/semantics.md, Streams). Checks its arguments at the call (bad
 * input throws there, nothing read); `RUN_NOT_FOUND`, `STREAM_RANGE` (`from` past the end) and
 * `STREAM_NOT_FOUND` (an ended run that never wrote the stream) come from the first `next()`.
 * Returning from the iteration (a `break`, a client gone) stops its listener and timer.
 */
export function readStream(store: WorkflowStore, clock: Clock, rawRunId: unknown, rawName: unknown, rawOptions: unknown): AsyncIterable<StreamChunk> {
  const runId = checkRunId('readStream runId', rawRunId);
  const name = checkIdentifier('readStream stream', rawName, IDENTIFIER_LIMITS.stepName);
  const options = checkOptions('readStream options', rawOptions, ['from', 'signal', 'pollInterval']) as ReadStreamOptions;
  const from = options.from ?? 0;
  if (typeof from !== 'number' || !Number.isSafeInteger(from) || from < 0) {
    throw new CairnError('INVALID_INPUT', `readStream options.from must be an integer from 0 (got ${String(from)})`, { data: { from } });
  }
  const signals = store.signals;
  const pollMs = options.pollInterval ?? (signals === undefined ? 100 : 1000);
  if (typeof pollMs !== 'number' || !Number.isFinite(pollMs) || pollMs < 10 || pollMs > 60_000) {
    throw new CairnError('INVALID_INPUT', `readStream options.pollInterval must be a number of ms from 10 to 60000 (got ${String(pollMs)})`);
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new CairnError('INVALID_INPUT', 'readStream options.signal must be an AbortSignal');
  }
  const abort = options.signal;
  const streams = streamsOf(store, 'readStream');
  return {
    async *[Symbol.asyncIterator]() {
      const wakeup = new Wakeup();
      // Listening starts before the first read: a chunk written in between is signalled, not missed.
      const stop =
        signals === undefined
          ? undefined
          : await signals.listen(STREAM_TOPIC, (message) => (message === undefined || message === runId ? wakeup.signal() : undefined));
      try {
        const run = await store.runs.get(runId);
        if (run === undefined) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
        let next = from;
        if (from > 0) {
          // `from` may be the length of the stream (wait for the next chunk), never past it.
          const before = await streams.read(runId, name, from - 1, 1);
          if (before.length === 0 || before[0]?.closed === true) {
            throw new CairnError('STREAM_RANGE', `readStream: stream ${JSON.stringify(name)} of run ${runId} has fewer than ${from} chunks`, {
              data: { runId, stream: name, from },
            });
          }
        }
        let ended = isTerminalRunStatus(run.status);
        for (;;) {
          abort?.throwIfAborted();
          const entries = await streams.read(runId, name, next, PAGE);
          for (const entry of entries) {
            if (entry.closed) return;
            yield { index: entry.index, data: entry.data ?? null, writtenAt: entry.writtenAt };
            next = entry.index + 1;
          }
          // More may have come while these were read: look again at once.
          if (entries.length > 0) continue;
          if (ended) {
            if (next === 0) {
              throw new CairnError('STREAM_NOT_FOUND', `readStream: run ${runId} ended without writing stream ${JSON.stringify(name)}`, {
                data: { runId, stream: name },
              });
            }
            return;
          }
          // Nothing new: wait, unless the run has ended (a run writes nothing after its end, so one
          // more read after seeing it ended gets every chunk it wrote).
          const now = await store.runs.get(runId);
          ended = now === undefined || isTerminalRunStatus(now.status);
          if (!ended) await wakeup.wait(clock, pollMs, abort);
        }
      } finally {
        await stop?.().catch(() => {});
      }
    },
  };
}
