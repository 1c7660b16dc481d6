/** Every code a `CairnError` can carry. */
export const ERROR_CODES = [
  'INVALID_INPUT',
  // No longer thrown (bad durations are INVALID_INPUT); kept so error records written by earlier
  // versions still decode as CairnErrors.
  'INVALID_DURATION',
  'NOT_SERIALIZABLE',
  // A workflow's output its `output` schema refused: the run fails with it.
  'INVALID_OUTPUT',
  'PAYLOAD_TOO_LARGE',
  'WORKFLOW_NOT_FOUND',
  'VERSION_NOT_FOUND',
  'VERSION_RETIRED',
  'RUN_NOT_FOUND',
  'RUN_CONFLICT',
  'RUN_ACTIVE',
  'STEP_CONFLICT',
  'STEP_NOT_FOUND',
  'LEASE_LOST',
  'NON_DETERMINISM',
  'STEP_FAILED',
  'STEP_TIMEOUT',
  'ATTEMPT_ABANDONED',
  'CHILD_FAILED',
  'EVENT_TIMEOUT',
  'RUN_FAILED',
  'RUN_CANCELLED',
  'CANCELLED',
  'DEADLINE_EXCEEDED',
  'RESULT_TIMEOUT',
  'QUEUE_UNSUPPORTED',
  'QUEUE_NAME_COLLISION',
  'ENGINE_STOPPED',
  'STORE_ERROR',
  'QUEUE_ERROR',
  // A payload codec (createEngine({ codec })) could not encode or decode a payload: nothing was written or read.
  'CODEC_ERROR',
  'SCHEDULE_NOT_FOUND',
  'SCHEDULE_EXISTS',
  // Streams (docs/semantics.md "Streams"): the store has none; a reader's stream never existed on an
  // ended run; a write the stream refuses (closed, or out of order); a chunk or stream over its
  // limit; a reader's `from` past the end.
  'STREAM_UNSUPPORTED',
  'STREAM_NOT_FOUND',
  'STREAM_CONFLICT',
  'STREAM_LIMIT',
  'STREAM_RANGE',
  // engine.pause and friends on a store without `pauses`: nothing was written.
  'PAUSE_UNSUPPORTED',
  // Tags (docs/operating.md "Finding runs"): the store has no tag index; tags past TAG_LIMITS. Nothing was written.
  'TAGS_UNSUPPORTED',
  'TAG_LIMIT',
  // engine.bulk (docs/operating.md "Bulk operations"): the store keeps no bulk records; no such
  // operation; another live process works on it (its owner's lease has not run out).
  'BULK_UNSUPPORTED',
  'BULK_NOT_FOUND',
  'BULK_BUSY',
  // Requests (docs/semantics.md "Requests"): the store has no streams to keep them; no execution
  // took the request (or replied) before the caller's timeout; the run ended (or had ended) without
  // replying; the workflow refused the request (`reject`).
  'REQUEST_UNSUPPORTED',
  'REQUEST_TIMEOUT',
  'REQUEST_RUN_ENDED',
  'REQUEST_REJECTED',
] as const;

/** A `CairnError` code. */
export type ErrorCode = (typeof ERROR_CODES)[number];
