import type { Json, RunRecord, RunStatus, StepRecord } from '@cairn/core';
import type { AttemptRecord, AttemptStatus, EventRecord, RetryRecord, StepKind, StepStatus, VersionRecord, VersionStatus } from '@cairn/core/backend';
import { decodeError, decodeJson, encodeError, encodeJson } from './json-codec.js';
import { decodeKey } from './key-codec.js';

/** One attempt of a step, stored at `steps.<key>.attempts.a<n>`. */
export interface AttemptDoc {
  attempt: number;
  status: AttemptStatus;
  worker?: string;
  startedAt: number;
  endedAt?: number;
  /** JSON text. */
  output?: string;
  /** JSON text of an `ErrorRecord`. */
  error?: string;
}

/** A step, stored at `steps.<encoded key>` inside its run document; its attempts live inside it. */
export interface StepDoc {
  name: string;
  kind: StepKind;
  seq: number;
  status: StepStatus;
  attempt: number;
  maxAttempts: number;
  queued: boolean;
  output?: string;
  error?: string;
  wakeAt?: number;
  childRunId?: string;
  /** The delivery turn (`StepRecord.turn`): a plain number, like `seq`; absent until written. */
  turn?: number;
  /** The fence of the claim that recorded the step (`StepRecord.fence`); absent for older steps. */
  fence?: number;
  createdAt: number;
  updatedAt: number;
  attempts: Record<string, AttemptDoc>;
}

/**
 * One message, stored at `messages.<encoded name>.m<seq>`; also the shape of an event that a
 * release before messages stored at `events.<encoded name>` (read as message 1 of its name).
 */
export interface EventDoc {
  payload: string;
  deliveredAt: number;
  /** The idempotency key of the send, if any. */
  key?: string;
}

/** The messages of one name: `n` counts them, `m<seq>` holds message `seq` (from 1). */
export interface MessagesDoc {
  n: number;
  [message: `m${number}`]: EventDoc;
}

/**
 * The run document: the run, its steps (with their attempts), its state and its events, so that
 * every write of an executing run is one atomic single-document update that checks the fence.
 */
export interface RunDoc {
  _id: string;
  workflow: string;
  version: string;
  input: string;
  status: RunStatus;
  output?: string;
  error?: string;
  parent?: { runId: string; stepKey: string };
  idempotencyKey?: string;
  /** Always present, unique with `workflow`: `k:<idempotencyKey>`, or `r:<run id>` without one. */
  idem: string;
  lease?: { owner: string; expiresAt: number };
  fence: number;
  cancelRequested: boolean;
  /** `RunRecord.cancelReason`: written only by the request that sets `cancelRequested`. */
  cancelReason?: string;
  /** `RunRecord.deadline` (epoch ms), set at creation (a retry may remove it). */
  deadline?: number;
  /** `RunRecord.forkedFrom`, set at creation. */
  forkedFrom?: { runId: string; stepKey: string };
  /** JSON text of `RunRecord.retries` (error records may hold any key, so not a sub-document). */
  retries?: string;
  /** `RunRecord.traceContext` as JSON text (its keys are free-form, so not a sub-document), set at creation. */
  traceContext?: string;
  /** `RunRecord.priority`, set at creation; absent for 0. */
  priority?: number;
  /** `RunRecord.paused` (its fields are the engine's: no free-form keys), absent when not paused. */
  paused?: { at: number; scope: 'run' | 'workflow'; reason?: string };
  /** `RunRecord.tags` as JSON text (its keys are free-form, so not a sub-document); absent when none. */
  tags?: string;
  /** The tag tokens (`tagTokens`: `JSON.stringify([key, value])` each) the multikey index `cairn_tags_created` holds; absent when none. */
  tg?: string[];
  /** `RunRecord.tagWrites`; absent when none. */
  tw?: number;
  /** Set by the run's first stream entry: `runs.delete` then also deletes its entries (one more command only for such runs). */
  sx?: true;
  wakeAt?: number;
  /**
   * When recovery must look at the run: `wakeAt` while `pending`/`waiting`, the lease expiry
   * while `running`, absent when terminal. Maintained by every write; indexed for `findDue`.
   */
  dueAt?: number;
  /** The time of the earliest outstanding promise of `runs.promiseWake` (decision 78); absent when none. */
  promisedAt?: number;
  /** How many promises are outstanding; absent when none. */
  promises?: number;
  createdAt: number;
  updatedAt: number;
  steps: Record<string, StepDoc>;
  state: Record<string, string>;
  /** Events stored by releases before messages: one per name, first write won. Never written now. */
  events: Record<string, EventDoc>;
  /** The messages of each event name, by encoded name (created by the first send). */
  messages?: Record<string, MessagesDoc>;
  /** The seq each idempotency key of a send stored, by encoded key (created by the first keyed send). */
  eventKeys?: Record<string, { name: string; seq: number }>;
}

/** A registered version (collection `<prefix>versions`, unique on workflow + version). */
export interface VersionDoc {
  workflow: string;
  version: string;
  status: VersionStatus;
  descriptor: string;
  createdAt: number;
  updatedAt: number;
}

/** Field path of a step inside the run document. */
export const stepPath = (field: string): string => `steps.${field}`;

/** Field name of attempt `n` inside a step's `attempts`. */
export const attemptField = (n: number): string => `a${n}`;

/** The projection that leaves the per-run collections (steps, state, events, messages) on the server. */
export const RUN_ONLY = { steps: 0, state: 0, events: 0, messages: 0, eventKeys: 0, tg: 0 } as const;

/** `runs.list`'s projection: `RUN_ONLY` without the payloads (input, output, retry records) either. */
export const RUN_SUMMARY = { ...RUN_ONLY, input: 0, output: 0, retries: 0 } as const;

/** Converts a run document (steps/state/events may be absent) to the public record. */
export function toRunRecord(doc: RunDoc): RunRecord {
  const run: RunRecord = {
    id: doc._id,
    workflow: doc.workflow,
    version: doc.version,
    // Absent only from a summary's projection (RUN_SUMMARY), which drops it again.
    input: doc.input === undefined ? null : decodeJson(doc.input),
    status: doc.status,
    fence: doc.fence,
    cancelRequested: doc.cancelRequested,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
  if (doc.output !== undefined) run.output = decodeJson(doc.output);
  if (doc.error !== undefined) run.error = decodeError(doc.error);
  if (doc.parent !== undefined) run.parent = { runId: doc.parent.runId, stepKey: doc.parent.stepKey };
  if (doc.idempotencyKey !== undefined) run.idempotencyKey = doc.idempotencyKey;
  if (doc.lease !== undefined) run.lease = { owner: doc.lease.owner, expiresAt: doc.lease.expiresAt };
  if (doc.wakeAt !== undefined) run.wakeAt = doc.wakeAt;
  if (doc.cancelReason !== undefined) run.cancelReason = doc.cancelReason;
  if (doc.deadline !== undefined) run.deadline = doc.deadline;
  if (doc.forkedFrom !== undefined) run.forkedFrom = { runId: doc.forkedFrom.runId, stepKey: doc.forkedFrom.stepKey };
  if (doc.retries !== undefined) run.retries = JSON.parse(doc.retries) as RetryRecord[];
  if (doc.traceContext !== undefined) run.traceContext = JSON.parse(doc.traceContext) as Record<string, string>;
  if (doc.priority !== undefined) run.priority = doc.priority;
  if (doc.tags !== undefined) run.tags = JSON.parse(doc.tags) as Record<string, string>;
  if (doc.tw !== undefined) run.tagWrites = doc.tw;
  if (doc.paused !== undefined) run.paused = doc.paused.reason === undefined ? { at: doc.paused.at, scope: doc.paused.scope } : { ...doc.paused };
  return run;
}

/** Converts a stored step to the public record. */
export function toStepRecord(runId: string, field: string, doc: StepDoc): StepRecord {
  const step: StepRecord = {
    runId,
    key: decodeKey(field),
    name: doc.name,
    kind: doc.kind,
    seq: doc.seq,
    status: doc.status,
    attempt: doc.attempt,
    maxAttempts: doc.maxAttempts,
    queued: doc.queued,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
  if (doc.output !== undefined) step.output = decodeJson(doc.output);
  if (doc.error !== undefined) step.error = decodeError(doc.error);
  if (doc.wakeAt !== undefined) step.wakeAt = doc.wakeAt;
  if (doc.childRunId !== undefined) step.childRunId = doc.childRunId;
  if (doc.turn !== undefined) step.turn = doc.turn;
  if (doc.fence !== undefined) step.fence = doc.fence;
  return step;
}

/** Converts a step record to its stored form, with no attempts yet (the reverse of `toStepRecord`). */
export function toStepDoc(step: StepRecord): StepDoc {
  // The run document and the field name already hold the run id and the key.
  const { runId: _runId, key: _key, output, error, ...fields } = step;
  const doc: StepDoc = { ...fields, attempts: {} };
  if (output !== undefined) doc.output = encodeJson(output);
  if (error !== undefined) doc.error = encodeError(error);
  return doc;
}

/** Converts a stored attempt to the public record. */
export function toAttemptRecord(runId: string, stepKey: string, doc: AttemptDoc): AttemptRecord {
  const attempt: AttemptRecord = { runId, stepKey, attempt: doc.attempt, status: doc.status, startedAt: doc.startedAt };
  if (doc.worker !== undefined) attempt.worker = doc.worker;
  if (doc.endedAt !== undefined) attempt.endedAt = doc.endedAt;
  if (doc.output !== undefined) attempt.output = decodeJson(doc.output);
  if (doc.error !== undefined) attempt.error = decodeError(doc.error);
  return attempt;
}

/** Converts a stored event to the public record. */
export function toEventRecord(runId: string, name: string, seq: number, doc: EventDoc): EventRecord {
  const event: EventRecord = { runId, name, seq, payload: decodeJson(doc.payload), deliveredAt: doc.deliveredAt };
  if (doc.key !== undefined) event.idempotencyKey = doc.key;
  return event;
}

/** Converts a stored version to the public record. */
export function toVersionRecord(doc: VersionDoc): VersionRecord {
  return {
    workflow: doc.workflow,
    version: doc.version,
    status: doc.status,
    descriptor: decodeJson(doc.descriptor) as Json,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}
