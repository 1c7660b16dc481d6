import type { ErrorRecord, Json, RunRecord, RunStatus, StepRecord } from '@cairn/core';
import type {
  AttemptRecord,
  ForkOrigin,
  RunPause,
  RetryRecord,
  EventRecord,
  NewRun,
  NewStep,
  ParentRef,
  StepKind,
  StepStatus,
  VersionRecord,
  VersionStatus,
  AttemptStatus,
} from '@cairn/core/backend';
import { idempotencyField } from './keys.js';

/** A Redis hash as a plain object, from a flat `[field, value, ...]` array or an object reply. */
export type Hash = Record<string, string>;

export function toHash(reply: unknown): Hash {
  if (Array.isArray(reply)) {
    // No prototype: a field called `__proto__` (a hostile state key) stays an ordinary field.
    const hash: Hash = Object.create(null) as Hash;
    for (let i = 0; i + 1 < reply.length; i += 2) hash[String(reply[i])] = String(reply[i + 1]);
    return hash;
  }
  if (reply instanceof Map) return Object.fromEntries([...reply].map(([k, v]) => [String(k), String(v)]));
  if (reply && typeof reply === 'object') return reply as Hash;
  return {};
}

export const isEmpty = (hash: Hash): boolean => Object.keys(hash).length === 0;

const json = (text: string): Json => JSON.parse(text) as Json;

/** An optional script argument: `''` when absent, `'=' + value` when present. */
export const opt = (value: string | number | undefined): string => (value === undefined ? '' : `=${value}`);

/** JSON text of a value, or `undefined` for `undefined` (which the store keeps as "absent"). */
export const jsonText = (value: Json | ErrorRecord | undefined): string | undefined => (value === undefined ? undefined : JSON.stringify(value));

/** The field/value pairs of a new run's hash. */
export function newRunFields(run: NewRun, now: number): string[] {
  const fields = [
    'id',
    run.id,
    'workflow',
    run.workflow,
    'version',
    run.version,
    'input',
    JSON.stringify(run.input),
    'status',
    'pending',
    'fence',
    '0',
    'cancel',
    '0',
    'createdAt',
    String(now),
    'updatedAt',
    String(now),
  ];
  if (run.parent) fields.push('parent', JSON.stringify({ runId: run.parent.runId, stepKey: run.parent.stepKey }));
  if (run.idempotencyKey !== undefined) {
    fields.push('idem', run.idempotencyKey, 'idemField', idempotencyField(run.workflow, run.idempotencyKey));
  }
  if (run.wakeAt !== undefined) fields.push('wakeAt', String(run.wakeAt));
  if (run.deadline !== undefined) fields.push('deadline', String(run.deadline));
  if (run.forkedFrom !== undefined) fields.push('forkedFrom', JSON.stringify({ runId: run.forkedFrom.runId, stepKey: run.forkedFrom.stepKey }));
  if (run.traceContext !== undefined) fields.push('trace', JSON.stringify(run.traceContext));
  // Priority 0 is the default: stored absent, read back absent.
  if (run.priority !== undefined && run.priority !== 0) fields.push('priority', String(run.priority));
  if (run.tags !== undefined && Object.keys(run.tags).length > 0) fields.push('tags', JSON.stringify(run.tags));
  return fields;
}

/** A run from its hash (`undefined` for an empty hash: the run does not exist). */
export function parseRun(hash: Hash): RunRecord | undefined {
  if (isEmpty(hash) || hash.id === undefined) return undefined;
  const run: RunRecord = {
    id: hash.id,
    workflow: hash.workflow ?? '',
    version: hash.version ?? '',
    input: json(hash.input ?? 'null'),
    status: hash.status as RunStatus,
    fence: Number(hash.fence ?? 0),
    cancelRequested: hash.cancel === '1',
    createdAt: Number(hash.createdAt),
    updatedAt: Number(hash.updatedAt),
  };
  if (hash.output !== undefined) run.output = json(hash.output);
  if (hash.error !== undefined) run.error = JSON.parse(hash.error) as ErrorRecord;
  if (hash.parent !== undefined) run.parent = JSON.parse(hash.parent) as ParentRef;
  if (hash.idem !== undefined) run.idempotencyKey = hash.idem;
  if (hash.leaseOwner !== undefined && hash.leaseExp !== undefined) {
    run.lease = { owner: hash.leaseOwner, expiresAt: Number(hash.leaseExp) };
  }
  if (hash.wakeAt !== undefined) run.wakeAt = Number(hash.wakeAt);
  if (hash.deadline !== undefined) run.deadline = Number(hash.deadline);
  if (hash.cancelReason !== undefined) run.cancelReason = hash.cancelReason;
  if (hash.forkedFrom !== undefined) run.forkedFrom = JSON.parse(hash.forkedFrom) as ForkOrigin;
  if (hash.retries !== undefined) run.retries = JSON.parse(hash.retries) as RetryRecord[];
  if (hash.trace !== undefined) run.traceContext = JSON.parse(hash.trace) as Record<string, string>;
  if (hash.priority !== undefined) run.priority = Number(hash.priority);
  if (hash.paused !== undefined) run.paused = JSON.parse(hash.paused) as RunPause;
  if (hash.tags !== undefined) run.tags = JSON.parse(hash.tags) as Record<string, string>;
  if (hash.tagWrites !== undefined) run.tagWrites = Number(hash.tagWrites);
  return run;
}

/** The field/value pairs of a new step's hash. */
export function newStepFields(step: NewStep, now: number, fence: number | null = null): string[] {
  const fields = [
    'key',
    step.key,
    'name',
    step.name,
    'kind',
    step.kind,
    'seq',
    String(step.seq),
    'status',
    step.status,
    'attempt',
    '1',
    'maxAttempts',
    String(step.maxAttempts),
    'queued',
    step.queued ? '1' : '0',
    'createdAt',
    String(now),
    'updatedAt',
    String(now),
  ];
  if (step.output !== undefined) fields.push('output', JSON.stringify(step.output));
  if (step.error !== undefined) fields.push('error', JSON.stringify(step.error));
  if (step.wakeAt !== undefined) fields.push('wakeAt', String(step.wakeAt));
  if (step.childRunId !== undefined) fields.push('childRunId', step.childRunId);
  if (step.turn !== undefined) fields.push('turn', String(step.turn));
  // The script checked it against the run's fence before writing: the claim that records the step.
  if (fence !== null) fields.push('fence', String(fence));
  return fields;
}

/**
 * The attempt-1 fields `steps.insert` writes with a new step, in the same script: attempt 1 opened
 * for a `running` step, or the finished attempt 1 of a step recorded finished; none otherwise.
 */
export function firstAttemptFields(step: NewStep, now: number): string[] {
  if (step.status === 'running') {
    return ['stepKey', step.key, 'attempt', '1', 'status', 'running', 'startedAt', String(now), ...(step.worker === undefined ? [] : ['worker', step.worker])];
  }
  const done = step.finishedAttempt;
  if (done === undefined) return [];
  const fields = [
    'stepKey',
    step.key,
    'attempt',
    '1',
    'status',
    done.status,
    'worker',
    done.worker,
    'startedAt',
    String(done.startedAt),
    'endedAt',
    String(now),
  ];
  if (done.output !== undefined) fields.push('output', JSON.stringify(done.output));
  if (done.error !== undefined) fields.push('error', JSON.stringify(done.error));
  return fields;
}

export function parseStep(runId: string, hash: Hash): StepRecord {
  const step: StepRecord = {
    runId,
    key: hash.key ?? '',
    name: hash.name ?? '',
    kind: hash.kind as StepKind,
    seq: Number(hash.seq),
    status: hash.status as StepStatus,
    attempt: Number(hash.attempt),
    maxAttempts: Number(hash.maxAttempts),
    queued: hash.queued === '1',
    createdAt: Number(hash.createdAt),
    updatedAt: Number(hash.updatedAt),
  };
  if (hash.output !== undefined) step.output = json(hash.output);
  if (hash.error !== undefined) step.error = JSON.parse(hash.error) as ErrorRecord;
  if (hash.wakeAt !== undefined) step.wakeAt = Number(hash.wakeAt);
  if (hash.childRunId !== undefined) step.childRunId = hash.childRunId;
  if (hash.turn !== undefined) step.turn = Number(hash.turn);
  if (hash.fence !== undefined) step.fence = Number(hash.fence);
  return step;
}

export function parseAttempt(runId: string, hash: Hash): AttemptRecord {
  const attempt: AttemptRecord = {
    runId,
    stepKey: hash.stepKey ?? '',
    attempt: Number(hash.attempt),
    status: hash.status as AttemptStatus,
    startedAt: Number(hash.startedAt),
  };
  if (hash.worker !== undefined) attempt.worker = hash.worker;
  if (hash.endedAt !== undefined) attempt.endedAt = Number(hash.endedAt);
  if (hash.output !== undefined) attempt.output = json(hash.output);
  if (hash.error !== undefined) attempt.error = JSON.parse(hash.error) as ErrorRecord;
  return attempt;
}

/** How a message is kept in the run's messages hash: its delivery time, payload and idempotency key. */
export const encodeEvent = (payload: Json, now: number, idempotencyKey?: string): string =>
  JSON.stringify(idempotencyKey === undefined ? [now, payload] : [now, payload, idempotencyKey]);

export function parseEvent(runId: string, name: string, seq: number, text: string): EventRecord {
  const [deliveredAt, payload, idempotencyKey] = JSON.parse(text) as [number, Json, string?];
  const event: EventRecord = { runId, name, seq, payload, deliveredAt };
  if (idempotencyKey !== undefined) event.idempotencyKey = idempotencyKey;
  return event;
}

export function parseVersion(hash: Hash): VersionRecord & { seq: number } {
  return {
    workflow: hash.workflow ?? '',
    version: hash.version ?? '',
    status: hash.status as VersionStatus,
    descriptor: json(hash.descriptor ?? 'null'),
    createdAt: Number(hash.createdAt),
    updatedAt: Number(hash.updatedAt),
    seq: Number(hash.seq ?? 0),
  };
}
