import type { ErrorRecord, Json, RunRecord, RunStatus, StepRecord } from '@cairn/core';
import type { AttemptRecord, AttemptStatus, EventRecord, RunPause, RetryRecord, StepKind, StepStatus, VersionRecord, VersionStatus } from '@cairn/core/backend';
import type { AttemptRow, EventRow, RunRow, StepRow, VersionRow } from '../schema/tables.js';
import { decodeJson, toNumber, toOptionalNumber, toText } from './json.js';
import { decodeText } from './text.js';

const flag = (value: unknown): boolean => value === true || Number(value) === 1;
const text = (value: unknown): string => decodeText(toText(value));

/** A `runs` row as a `RunRecord` (optional fields absent when SQL NULL). */
export function toRunRecord(row: RunRow): RunRecord {
  const run: RunRecord = {
    id: text(row.id),
    workflow: text(row.workflow),
    version: text(row.version),
    input: decodeJson<Json>(row.input_json) ?? null,
    status: row.status as RunStatus,
    fence: toNumber(row.fence),
    cancelRequested: flag(row.cancel_requested),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
  const output = decodeJson<Json>(row.output_json);
  if (output !== undefined) run.output = output;
  const error = decodeJson<ErrorRecord>(row.error_json);
  if (error !== undefined) run.error = error;
  if (row.parent_run_id !== null && row.parent_step_key !== null) {
    run.parent = { runId: text(row.parent_run_id), stepKey: text(row.parent_step_key) };
  }
  if (row.idempotency_key !== null) run.idempotencyKey = text(row.idempotency_key);
  if (row.lease_owner !== null && row.lease_expires_at !== null) {
    run.lease = { owner: text(row.lease_owner), expiresAt: toNumber(row.lease_expires_at) };
  }
  const wakeAt = toOptionalNumber(row.wake_at);
  if (wakeAt !== undefined) run.wakeAt = wakeAt;
  const deadline = toOptionalNumber(row.deadline ?? null);
  if (deadline !== undefined) run.deadline = deadline;
  if (row.cancel_reason !== undefined && row.cancel_reason !== null) run.cancelReason = text(row.cancel_reason);
  if (row.forked_from_run_id != null && row.forked_from_step_key != null) {
    run.forkedFrom = { runId: text(row.forked_from_run_id), stepKey: text(row.forked_from_step_key) };
  }
  const retries = row.retries_json == null ? undefined : decodeJson<RetryRecord[]>(row.retries_json);
  if (retries !== undefined) run.retries = retries;
  const traceContext = decodeJson<Record<string, string>>(row.trace_context_json ?? null);
  if (traceContext !== undefined) run.traceContext = traceContext;
  const priority = toOptionalNumber(row.priority ?? null);
  if (priority !== undefined && priority !== 0) run.priority = priority;
  const paused = decodeJson<RunPause>(row.paused_json ?? null);
  if (paused !== undefined) run.paused = paused;
  const tags = decodeJson<Record<string, string>>(row.tags_json ?? null);
  if (tags !== undefined) run.tags = tags;
  const tagWrites = toOptionalNumber(row.tag_writes ?? null);
  if (tagWrites !== undefined && tagWrites !== 0) run.tagWrites = tagWrites;
  return run;
}

/** A `steps` row as a `StepRecord`. */
export function toStepRecord(row: StepRow): StepRecord {
  const step: StepRecord = {
    runId: text(row.run_id),
    key: text(row.step_key),
    name: text(row.name),
    kind: row.kind as StepKind,
    seq: toNumber(row.seq),
    status: row.status as StepStatus,
    attempt: toNumber(row.attempt),
    maxAttempts: toNumber(row.max_attempts),
    queued: flag(row.queued),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
  const output = decodeJson<Json>(row.output_json);
  if (output !== undefined) step.output = output;
  const error = decodeJson<ErrorRecord>(row.error_json);
  if (error !== undefined) step.error = error;
  const wakeAt = toOptionalNumber(row.wake_at);
  if (wakeAt !== undefined) step.wakeAt = wakeAt;
  if (row.child_run_id !== null) step.childRunId = text(row.child_run_id);
  const turn = toOptionalNumber(row.turn);
  if (turn !== undefined) step.turn = turn;
  const fence = toOptionalNumber(row.fence ?? null);
  if (fence !== undefined) step.fence = fence;
  return step;
}

/** An `attempts` row as an `AttemptRecord`. */
export function toAttemptRecord(row: AttemptRow): AttemptRecord {
  const attempt: AttemptRecord = {
    runId: text(row.run_id),
    stepKey: text(row.step_key),
    attempt: toNumber(row.attempt),
    status: row.status as AttemptStatus,
    startedAt: toNumber(row.started_at),
  };
  if (row.worker !== null) attempt.worker = text(row.worker);
  const endedAt = toOptionalNumber(row.ended_at);
  if (endedAt !== undefined) attempt.endedAt = endedAt;
  const output = decodeJson<Json>(row.output_json);
  if (output !== undefined) attempt.output = output;
  const error = decodeJson<ErrorRecord>(row.error_json);
  if (error !== undefined) attempt.error = error;
  return attempt;
}

/** An `events` row as an `EventRecord`. */
export function toEventRecord(row: EventRow): EventRecord {
  const event: EventRecord = {
    runId: text(row.run_id),
    name: text(row.name),
    seq: toNumber(row.seq),
    payload: decodeJson<Json>(row.payload_json) ?? null,
    deliveredAt: toNumber(row.delivered_at),
  };
  if (row.idempotency_key !== null && row.idempotency_key !== undefined) event.idempotencyKey = text(row.idempotency_key);
  return event;
}

/** A `versions` row as a `VersionRecord`. */
export function toVersionRecord(row: VersionRow): VersionRecord {
  return {
    workflow: text(row.workflow),
    version: text(row.version),
    status: row.status as VersionStatus,
    descriptor: decodeJson<Json>(row.descriptor_json) ?? null,
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}
