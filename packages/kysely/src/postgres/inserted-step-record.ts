import type { ErrorRecord, Json, StepRecord } from '@cairn/core';
import type { Fence, NewStep } from '@cairn/core/backend';
import { decodeJson } from '../codec/json.js';

/**
 * The record of the step `step_insert_v2` has just inserted from `step` (decision 45): what
 * `toStepRecord` reads back from that row, built from the values the INSERT took without the
 * row in between. Stored text decodes to the string that was encoded (`encodeText` is injective
 * and reversed by `decodeText`), BIGINT and INTEGER columns hold the numbers sent, `queued` is
 * the 0/1 flag of `step.queued === true`, a new step is on attempt 1 with `created_at =
 * updated_at = now`, and the JSON columns are parsed from the very texts that were sent
 * (`output`, `error`: SQL NULL for none), so the record shares no object with `step`.
 */
export function insertedStepRecord(runId: string, fence: Fence, step: NewStep, now: number, output: unknown, error: unknown): StepRecord {
  // Not `newStepRecord` (@cairn/core/backend), which copies the caller's values: this is what the
  // row holds — `queued` as the flag `=== true` makes, a NULL `turn` or `wakeAt` absent, the JSON
  // through its text (`-0` is `0`, an `undefined` member is gone), as `steps.load` reads it. The
  // properties in `toStepRecord`'s order, so the two records are alike down to key order.
  const record: StepRecord = {
    runId,
    key: step.key,
    name: step.name,
    kind: step.kind,
    seq: step.seq,
    status: step.status,
    attempt: 1,
    maxAttempts: step.maxAttempts,
    queued: step.queued === true,
    createdAt: now,
    updatedAt: now,
  };
  const outputValue = decodeJson<Json>(output);
  if (outputValue !== undefined) record.output = outputValue;
  const errorValue = decodeJson<ErrorRecord>(error);
  if (errorValue !== undefined) record.error = errorValue;
  if (step.wakeAt !== undefined && step.wakeAt !== null) record.wakeAt = step.wakeAt;
  if (step.childRunId !== undefined) record.childRunId = step.childRunId;
  if (step.turn !== undefined && step.turn !== null) record.turn = step.turn;
  if (fence !== null) record.fence = fence;
  return record;
}
