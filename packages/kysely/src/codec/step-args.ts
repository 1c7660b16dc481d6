import type { Fence, NewStep, StepTransition } from '@cairn/core/backend';
import type { STEP_INSERT_PARAMS, STEP_TRANSITION_PARAMS } from '../routines/params.js';
import { encodeJson } from './json.js';
import type { RoutineArgs } from './routine-args.js';
import type { StepIdentity } from './step-identity.js';
import { encodeText } from './text.js';

const flag = (on: boolean): number => (on ? 1 : 0);

/** The worker of the attempt the insert opens (a running step) or records (a finished one). */
function encodeWorker(step: NewStep): string | null {
  const worker = step.finishedAttempt?.worker ?? step.worker;
  return worker === undefined ? null : encodeText(worker);
}

/** The arguments of `step_insert` for a new step. */
export function stepInsertArgs(id: StepIdentity, fence: Fence, step: NewStep, now: number, asyncCommit: boolean): RoutineArgs<typeof STEP_INSERT_PARAMS> {
  return {
    p_run_id: id.runId,
    p_fence: fence,
    p_key_hash: id.keyHash,
    p_step_key: id.key,
    p_name: encodeText(step.name),
    p_kind: step.kind,
    p_seq: step.seq,
    p_status: step.status,
    p_max_attempts: step.maxAttempts,
    p_queued: flag(step.queued === true),
    p_output: encodeJson(step.output),
    p_error: encodeJson(step.error as never),
    p_wake_at: step.wakeAt ?? null,
    p_child_run_id: step.childRunId === undefined ? null : encodeText(step.childRunId),
    p_turn: step.turn ?? null,
    p_worker: encodeWorker(step),
    p_now: now,
    p_attempt_status: step.finishedAttempt?.status ?? null,
    p_attempt_started_at: step.finishedAttempt?.startedAt ?? null,
    p_attempt_output: step.finishedAttempt?.output === undefined ? null : encodeJson(step.finishedAttempt.output),
    p_attempt_error: step.finishedAttempt?.error === undefined ? null : encodeJson(step.finishedAttempt.error as never),
    p_async: flag(asyncCommit),
  };
}

/** The arguments of `step_transition` for a transition. */
export function stepTransitionArgs(id: StepIdentity, fence: Fence, t: StepTransition, now: number): RoutineArgs<typeof STEP_TRANSITION_PARAMS> {
  const end = t.endAttempt;
  return {
    p_run_id: id.runId,
    p_fence: fence,
    p_key_hash: id.keyHash,
    p_from_statuses: t.from.status.join(','),
    p_from_attempt: t.from.attempt,
    p_to_status: t.to.status,
    p_to_attempt: t.to.attempt ?? null,
    p_set_output: flag(t.to.output !== undefined),
    p_output: t.to.output === undefined ? null : encodeJson(t.to.output),
    p_set_error: flag(t.to.error !== undefined),
    p_error: t.to.error === undefined ? null : encodeJson(t.to.error as never),
    p_wake: t.to.wakeAt === null ? 2 : t.to.wakeAt === undefined ? 0 : 1,
    p_wake_at: t.to.wakeAt ?? null,
    p_child_run_id: t.to.childRunId === undefined ? null : encodeText(t.to.childRunId),
    p_turn: t.to.turn ?? null,
    p_now: now,
    p_end_status: end?.status ?? null,
    p_end_set_output: flag(end?.output !== undefined),
    p_end_output: end?.output === undefined ? null : encodeJson(end.output),
    p_end_set_error: flag(end?.error !== undefined),
    p_end_error: end?.error === undefined ? null : encodeJson(end.error as never),
    p_start: flag(t.startAttempt !== undefined),
    p_start_worker: t.startAttempt === undefined ? null : encodeText(t.startAttempt.worker),
  };
}
