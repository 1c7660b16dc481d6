import type { Json } from './json.js';

/**
 * One entry to write in a run's named stream (`StreamStore.append`): chunk `index` (0-based) with
 * its `data`, or, with `close`, the stream's end marker at `index` (one past its last chunk).
 */
export type NewStreamEntry = { stream: string; index: number } & ({ data: Json; close?: undefined } | { close: true; data?: undefined });

/**
 * One stored entry of a run's stream, as `StreamStore.read` returns it: a chunk (`data`), or the
 * end marker (`closed: true`, no data), which is always the stream's last entry.
 */
export interface StreamEntry {
  readonly stream: string;
  /** 0-based position in the stream; chunks are numbered without gaps and the marker follows the last. */
  readonly index: number;
  /** The chunk's value (absent on the end marker). */
  readonly data?: Json;
  /** True on the end marker. */
  readonly closed?: true;
  /** When the entry was written (the `now` of its append). */
  readonly writtenAt: number;
}

/** One stream of a run, as `StreamStore.list` summarises it. */
export interface StreamSummary {
  readonly stream: string;
  /** Number of chunks (the end marker not counted). */
  readonly length: number;
  /** True once the end marker is written. */
  readonly closed: boolean;
}

/** A chunk as `engine.readStream` yields it. */
export interface StreamChunk<T = Json> {
  /** 0-based position in the stream: a reader resumes after chunk `i` with `{ from: i + 1 }`. */
  readonly index: number;
  readonly data: T;
  /** When the chunk was written. */
  readonly writtenAt: number;
}
