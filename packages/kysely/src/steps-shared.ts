import { sql, type RawBuilder } from 'kysely';
import { CairnError, type NewStep, type StepRecord, type StepTransition } from '@cairn/core';
import { encodeJson } from './codec/json.js';
import { encodeText, keyHash } from './codec/text.js';

/** The stored forms of a step's identity. */
export interface StepIdentity {
  runId: string;
  key: string;
  keyHash: string;
}

/** Encodes the identity of step `key` of `runId`. */
export function stepIdentity(runId: string, key: string): StepIdentity {
  const storedKey = encodeText(key);
  return { runId: encodeText(runId), key: storedKey, keyHash: keyHash(storedKey) };
}

/** The record a `steps.insert` creates (the same fields the reference store sets). */
export function newStepRecord(runId: string, step: NewStep, now: number): StepRecord {
  const record: StepRecord = {
    runId,
    key: step.key,
    name: step.name,
    kind: step.kind,
    seq: step.seq,
    status: step.status,
    attempt: 1,
    maxAttempts: step.maxAttempts,
    queued: step.queued ?? false,
    createdAt: now,
    updatedAt: now,
  };
  if (step.output !== undefined) record.output = structuredClone(step.output);
  if (step.error !== undefined) record.error = structuredClone(step.error);
  if (step.wakeAt !== undefined) record.wakeAt = step.wakeAt;
  if (step.childRunId !== undefined) record.childRunId = step.childRunId;
  return record;
}

/** The column values of a new step row, in `STEP_COLUMNS` order. */
export function stepValues(id: StepIdentity, step: NewStep, now: number): unknown[] {
  return [
    id.runId,
    id.keyHash,
    id.key,
    encodeText(step.name),
    step.kind,
    step.seq,
    step.status,
    1,
    step.maxAttempts,
    step.queued ? 1 : 0,
    encodeJson(step.output),
    encodeJson(step.error as never),
    step.wakeAt ?? null,
    step.childRunId === undefined ? null : encodeText(step.childRunId),
    now,
    now,
  ];
}

/** The step a transition produces from `current` (mirrors the reference store). */
export function applyStepTransition(current: StepRecord, t: StepTransition, now: number): StepRecord {
  const next: StepRecord = { ...current, status: t.to.status, attempt: t.to.attempt ?? current.attempt, updatedAt: now };
  if (t.to.output !== undefined) next.output = structuredClone(t.to.output);
  if (t.to.error !== undefined) next.error = structuredClone(t.to.error);
  if (t.to.wakeAt === null) delete next.wakeAt;
  else if (t.to.wakeAt !== undefined) next.wakeAt = t.to.wakeAt;
  if (t.to.childRunId !== undefined) next.childRunId = t.to.childRunId;
  return next;
}

/** The SET list of a step transition: only the columns the transition changes. */
export function stepTransitionSet(t: StepTransition, now: number): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [sql`status = ${t.to.status}`];
  if (t.to.attempt !== undefined) parts.push(sql`attempt = ${t.to.attempt}`);
  if (t.to.output !== undefined) parts.push(sql`output_json = ${encodeJson(t.to.output)}`);
  if (t.to.error !== undefined) parts.push(sql`error_json = ${encodeJson(t.to.error as never)}`);
  if (t.to.wakeAt === null) parts.push(sql`wake_at = null`);
  else if (t.to.wakeAt !== undefined) parts.push(sql`wake_at = ${t.to.wakeAt}`);
  if (t.to.childRunId !== undefined) parts.push(sql`child_run_id = ${encodeText(t.to.childRunId)}`);
  parts.push(sql`updated_at = ${now}`);
  return sql.join(parts);
}

/** The SET list that closes an attempt. */
export function endAttemptSet(end: NonNullable<StepTransition['endAttempt']>, now: number): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [sql`status = ${end.status}`, sql`ended_at = ${now}`];
  if (end.output !== undefined) parts.push(sql`output_json = ${encodeJson(end.output)}`);
  if (end.error !== undefined) parts.push(sql`error_json = ${encodeJson(end.error as never)}`);
  return sql.join(parts);
}

/** `STEP_CONFLICT`: the step is missing or does not match the expected status/attempt. */
export function stepConflict(runId: string, key: string, current: { status: string; attempt: number } | undefined): CairnError {
  return new CairnError('STEP_CONFLICT', `Step ${key} of run ${runId} does not match the expected status/attempt`, {
    data: { runId, key, status: current?.status ?? null, attempt: current?.attempt ?? null },
  });
}

/** Columns an attempt start overwrites when a row of that number already exists (it is reopened). */
export const ATTEMPT_REOPEN_COLUMNS = ['status', 'worker', 'started_at', 'ended_at', 'output_json', 'error_json'] as const;
