import type { ErrorRecord } from '../../model/error-record.js';
import type { Json } from '../../model/json.js';
import type { ForkOrigin, ParentRef, RetryRecord, RunRecord, RunStatus } from '../../model/run.js';
import { isTerminalRunStatus } from '../../model/run.js';
import type { AttemptRecord, AttemptStatus, StepKind, StepRecord, StepStatus } from '../../model/step.js';
import { continuedAs } from '../define/continued-as.js';

/**
 * A run's timeline: everything a person (or a screen) needs to see what happened to one run, as
 * plain JSON — the run, its steps in call order with their attempts and waits, the children it
 * started, and its state. Built by `Engine.timeline` from four reads (run, steps, attempts, state),
 * never one read per step. Times are epoch milliseconds; durations are milliseconds.
 */
export interface RunTimeline {
  run: TimelineRun;
  /** Every step in call order (`seq`). */
  steps: TimelineStep[];
  /** The runs this run started (awaited children, detached children, its successor), in call order. */
  children: TimelineChild[];
  /**
   * The run's state as it is now (every key set with `ctx.setState`, latest value). The store keeps
   * the latest value of each key only, so earlier values of a key are not part of the timeline.
   */
  state: Record<string, Json>;
  /** The earliest and latest time the timeline covers (run creation to end, or to the last event). */
  span: { from: number; to: number };
}

/** The run part of a timeline. */
export interface TimelineRun {
  id: string;
  workflow: string;
  version: string;
  status: RunStatus;
  createdAt: number;
  updatedAt: number;
  /** When the run ended (its last write), for a terminal run only. */
  endedAt?: number;
  /** `endedAt - createdAt` for a terminal run. */
  durationMs?: number;
  input: Json;
  /** The handler's result of a completed run (absent when it returned nothing). */
  output?: Json;
  /** Why it failed or was cancelled. */
  error?: ErrorRecord;
  parent?: ParentRef;
  idempotencyKey?: string;
  deadline?: number;
  cancelRequested: boolean;
  cancelReason?: string;
  /** When the run next needs attention (a timer, a retry, a backstop), if it waits for a time. */
  wakeAt?: number;
  /** The run this one continued as (`ctx.continueAsNew`): its successor's id. */
  continuedAs?: string;
  /** The worker holding its lease now, if any. */
  leaseOwner?: string;
  /** For a run made by `engine.forkRun`: the run and step it was forked from. */
  forkedFrom?: ForkOrigin;
  /** Every `engine.retryRun` of this run, oldest first (what it was retried from, what it forgot). */
  retries?: RetryRecord[];
  /** The run's tags (`RunRecord.tags`), absent when it has none. */
  tags?: Record<string, string>;
}

/** What kind of thing a step is, as a timeline shows it. */
export type TimelineStepKind = StepKind | 'compensation' | 'continue';

/** One step of a timeline. */
export interface TimelineStep {
  key: string;
  name: string;
  kind: TimelineStepKind;
  /** Call order within the run. */
  seq: number;
  status: StepStatus;
  /** True when its body ran on the step queue (any worker) instead of inline. */
  queued: boolean;
  /** Attempts allowed (1 + retries). */
  maxAttempts: number;
  /** Every attempt of a task step, oldest first (empty for waits and recorded values). */
  attempts: TimelineAttempt[];
  /** When the step was first recorded (or its first attempt started, if earlier). */
  startedAt: number;
  /** When it finished (its last attempt's end, or its last write), once it has. */
  endedAt?: number;
  durationMs?: number;
  output?: Json;
  error?: ErrorRecord;
  /** What a waiting step waits (or waited) for. */
  wait?: TimelineWait;
  /** For a compensation step (`<key>:compensate`): the step it undoes. */
  compensates?: string;
}

/** One attempt of a step. */
export interface TimelineAttempt {
  attempt: number;
  status: AttemptStatus;
  worker?: string;
  startedAt: number;
  endedAt?: number;
  durationMs?: number;
  error?: ErrorRecord;
}

/** What a step waits for. */
export type TimelineWait =
  /** A durable timer (`ctx.sleep` / `sleepUntil`) ending at `until`. */
  | { kind: 'sleep'; until: number }
  /**
   * An event wait: its name, when it gives up (if it has a timeout), and the message it received
   * (`received`, present once it succeeded; `timedOut` when it gave up).
   */
  | { kind: 'event'; event: string; timeoutAt?: number; received?: Json; timedOut?: boolean }
  /** An awaited child run (`ctx.child` / `childOutcome`). */
  | { kind: 'child'; childRunId: string }
  /** The next attempt of a failed task, due at `at`. */
  | { kind: 'retry'; at: number }
  /** A select: its earliest timer, and (once decided) the winning alternative and its kind. */
  | { kind: 'select'; timeoutAt?: number; winner?: string; winnerKind?: string; event?: string; seq?: number };

/** A run another run started. */
export interface TimelineChild {
  runId: string;
  /** The step that started it. */
  stepKey: string;
  /** `child`: awaited (it has this run as parent); `detached`: `ctx.startChild`; `successor`: `continueAsNew`. */
  relation: 'child' | 'detached' | 'successor';
  /** The step's status: whether the child's end was handed to this run yet. */
  stepStatus: StepStatus;
}

const COMPENSATE_SUFFIX = ':compensate';

const finishedStep = (status: StepStatus) => status === 'succeeded' || status === 'failed';

function attemptOf(record: AttemptRecord): TimelineAttempt {
  return {
    attempt: record.attempt,
    status: record.status,
    ...(record.worker === undefined ? {} : { worker: record.worker }),
    startedAt: record.startedAt,
    ...(record.endedAt === undefined ? {} : { endedAt: record.endedAt, durationMs: record.endedAt - record.startedAt }),
    ...(record.error === undefined ? {} : { error: record.error }),
  };
}

/** A detached child (`ctx.startChild`) is recorded succeeded at once, its output being its id. */
const isDetachedChild = (step: StepRecord) =>
  step.kind === 'child' && step.status === 'succeeded' && step.childRunId !== undefined && step.output === step.childRunId;

function kindOf(step: StepRecord): TimelineStepKind {
  if (step.kind === 'child' && step.key === '$continue') return 'continue';
  if (step.kind === 'task' && step.name.endsWith(COMPENSATE_SUFFIX)) return 'compensation';
  return step.kind;
}

function waitOf(step: StepRecord): TimelineWait | undefined {
  switch (step.kind) {
    case 'sleep':
      return step.wakeAt === undefined ? undefined : { kind: 'sleep', until: step.wakeAt };
    case 'event': {
      const wait: TimelineWait = { kind: 'event', event: step.name.startsWith('event:') ? step.name.slice('event:'.length) : step.name };
      if (step.wakeAt !== undefined) wait.timeoutAt = step.wakeAt;
      if (step.status === 'succeeded') wait.received = step.output ?? null;
      if (step.status === 'failed' && step.error?.code === 'EVENT_TIMEOUT') wait.timedOut = true;
      return wait;
    }
    case 'child':
      return step.childRunId === undefined || isDetachedChild(step) || step.key === '$continue' ? undefined : { kind: 'child', childRunId: step.childRunId };
    case 'select': {
      const wait: TimelineWait = { kind: 'select' };
      if (step.wakeAt !== undefined) wait.timeoutAt = step.wakeAt;
      const won = step.output as { winner?: unknown; kind?: unknown; event?: unknown; seq?: unknown } | undefined;
      if (step.status === 'succeeded' && won !== null && typeof won === 'object') {
        if (typeof won.winner === 'string') wait.winner = won.winner;
        if (typeof won.kind === 'string') wait.winnerKind = won.kind;
        if (typeof won.event === 'string') wait.event = won.event;
        if (typeof won.seq === 'number') wait.seq = won.seq;
      }
      return wait;
    }
    case 'task':
      return step.status === 'retry_wait' && step.wakeAt !== undefined ? { kind: 'retry', at: step.wakeAt } : undefined;
    default:
      return undefined;
  }
}

function stepOf(step: StepRecord, attempts: AttemptRecord[]): TimelineStep {
  const kind = kindOf(step);
  const first = attempts[0];
  const last = attempts.at(-1);
  const startedAt = first === undefined ? step.createdAt : Math.min(first.startedAt, step.createdAt);
  let endedAt: number | undefined;
  if (finishedStep(step.status)) endedAt = last?.endedAt ?? step.updatedAt;
  const wait = waitOf(step);
  return {
    key: step.key,
    name: step.name,
    kind,
    seq: step.seq,
    status: step.status,
    queued: step.queued,
    maxAttempts: step.maxAttempts,
    attempts: attempts.map(attemptOf),
    startedAt,
    ...(endedAt === undefined ? {} : { endedAt, durationMs: Math.max(0, endedAt - startedAt) }),
    ...(step.output === undefined ? {} : { output: step.output }),
    ...(step.error === undefined ? {} : { error: step.error }),
    ...(wait === undefined ? {} : { wait }),
    ...(kind === 'compensation' ? { compensates: step.name.slice(0, -COMPENSATE_SUFFIX.length) } : {}),
  };
}

function runOf(run: RunRecord): TimelineRun {
  const terminal = isTerminalRunStatus(run.status);
  const successor = run.status === 'completed' ? continuedAs(run.output) : undefined;
  return {
    id: run.id,
    workflow: run.workflow,
    version: run.version,
    status: run.status,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    ...(terminal ? { endedAt: run.updatedAt, durationMs: run.updatedAt - run.createdAt } : {}),
    input: run.input,
    ...(run.output === undefined ? {} : { output: run.output }),
    ...(run.error === undefined ? {} : { error: run.error }),
    ...(run.parent === undefined ? {} : { parent: run.parent }),
    ...(run.idempotencyKey === undefined ? {} : { idempotencyKey: run.idempotencyKey }),
    ...(run.deadline === undefined ? {} : { deadline: run.deadline }),
    cancelRequested: run.cancelRequested,
    ...(run.cancelReason === undefined ? {} : { cancelReason: run.cancelReason }),
    ...(run.wakeAt === undefined ? {} : { wakeAt: run.wakeAt }),
    ...(successor === undefined ? {} : { continuedAs: successor }),
    ...(run.lease === undefined || terminal ? {} : { leaseOwner: run.lease.owner }),
    ...(run.forkedFrom === undefined ? {} : { forkedFrom: run.forkedFrom }),
    ...(run.tags === undefined ? {} : { tags: run.tags }),
    ...(run.retries === undefined || run.retries.length === 0 ? {} : { retries: run.retries }),
  };
}

/**
 * Builds a run's timeline from what the store returned for it: the run, its steps (`steps.load`),
 * every attempt (`history.list`) and its state. Pure: reads nothing, so a caller that already has
 * these (the engine, a dashboard) builds it without another round trip.
 */
export function buildRunTimeline(run: RunRecord, steps: readonly StepRecord[], attempts: readonly AttemptRecord[], state: Record<string, Json>): RunTimeline {
  const attemptsByKey = new Map<string, AttemptRecord[]>();
  for (const attempt of attempts) {
    const list = attemptsByKey.get(attempt.stepKey);
    if (list) list.push(attempt);
    else attemptsByKey.set(attempt.stepKey, [attempt]);
  }
  const ordered = [...steps].sort((a, b) => a.seq - b.seq);
  const timelineSteps = ordered.map((step) =>
    stepOf(
      step,
      (attemptsByKey.get(step.key) ?? []).sort((a, b) => a.attempt - b.attempt),
    ),
  );
  const children: TimelineChild[] = [];
  for (const step of ordered) {
    if (step.kind !== 'child' || step.childRunId === undefined) continue;
    const relation = step.key === '$continue' ? 'successor' : isDetachedChild(step) ? 'detached' : 'child';
    children.push({ runId: step.childRunId, stepKey: step.key, relation, stepStatus: step.status });
  }
  let to = run.updatedAt;
  for (const step of timelineSteps) {
    to = Math.max(to, step.endedAt ?? step.startedAt);
    for (const attempt of step.attempts) to = Math.max(to, attempt.endedAt ?? attempt.startedAt);
  }
  return { run: runOf(run), steps: timelineSteps, children, state: { ...state }, span: { from: run.createdAt, to } };
}
