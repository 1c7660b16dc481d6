import { CairnError } from '../errors/cairn-error.js';
import type { NewStreamEntry } from '../model/stream.js';

/** What an append does to a stream of `length` chunks, `closed` or not (see `StreamStore.append`). */
export type StreamAppendDecision = 'exists' | 'write';

/**
 * The rule of `StreamStore.append`, shared by every backend that reads the stream's head inside its
 * atomic unit: `exists` (keep what is stored, write nothing), `write` (store the entry), or
 * `STREAM_CONFLICT` thrown (a gap, or a new chunk on a closed stream). `length` counts the chunks
 * (the end marker not included); the marker, when present, sits at index `length`.
 */
export function decideStreamAppend(runId: string, length: number, closed: boolean, entry: NewStreamEntry): StreamAppendDecision {
  if (entry.close === true) {
    if (closed) return 'exists';
    if (entry.index === length) return 'write';
    throw streamConflict(runId, entry, length, closed);
  }
  if (entry.index < length) return 'exists';
  if (entry.index === length && !closed) return 'write';
  throw streamConflict(runId, entry, length, closed);
}

/** `STREAM_CONFLICT`: the entry cannot go where it was asked to (nothing was written). */
export function streamConflict(runId: string, entry: NewStreamEntry, length: number, closed: boolean): CairnError {
  const what = entry.close === true ? 'end marker' : `chunk ${entry.index}`;
  const why = closed ? 'the stream is closed' : `the stream has ${length} chunk(s)`;
  return new CairnError('STREAM_CONFLICT', `Run ${runId}: stream ${JSON.stringify(entry.stream)} refuses the ${what}: ${why}`, {
    data: { runId, stream: entry.stream, index: entry.index, length, closed },
  });
}
