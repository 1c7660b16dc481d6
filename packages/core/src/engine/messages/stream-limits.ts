/**
 * The limits of a run's streams (docs/semantics.md, Streams). A chunk larger than `maxChunkBytes`
 * (bytes of its UTF-8 JSON; or than the store's `maxPayloadBytes`, if smaller) or past
 * `maxChunks` in one stream is refused with `STREAM_LIMIT` and nothing is written.
 */
export const STREAM_LIMITS = {
  /** The largest chunk: 64 KiB of UTF-8 JSON. */
  maxChunkBytes: 64 * 1024,
  /** The most chunks one stream holds (its end marker not counted). */
  maxChunks: 10_000,
} as const;

/** The signal topic a stream write is announced on (each message is the run id). */
export const STREAM_TOPIC = 'streams';
