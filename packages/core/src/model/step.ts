import type { ErrorRecord } from './error-record.js';
import type { Json } from './json.js';

/** What a step records. `patch`: a patch marker (`ctx.patched`), recorded once where new code first took its path. */
export type StepKind = 'task' | 'sleep' | 'event' | 'child' | 'select' | 'now' | 'random' | 'uuid' | 'patch';

/**
 * Step statuses. `scheduled` (queued) → `running` → `succeeded` | `failed`; `running` →
 * `retry_wait` → `running` (next attempt); `waiting` (timer, event, child) → `succeeded` | `failed`.
 */
export type StepStatus = 'scheduled' | 'running' | 'retry_wait' | 'waiting' | 'succeeded' | 'failed';

/** A durable unit of a run, identified by its key (`charge`, `charge#2`). Times are epoch ms. */
export interface StepRecord {
  runId: string;
  /** The name plus an occurrence suffix when a name repeats: `name`, `name#2`, ... */
  key: string;
  /** The name the code gave it. */
  name: string;
  kind: StepKind;
  /** Order of first recording within the run, assigned by the engine (0, 1, 2, ...). */
  seq: number;
  status: StepStatus;
  /** The current attempt number, starting at 1. */
  attempt: number;
  /** Fixed when the step is first recorded. */
  maxAttempts: number;
  /** True when the step body runs on the step queue rather than inline. */
  queued: boolean;
  output?: Json;
  error?: ErrorRecord;
  /** Sleep end, event deadline, next attempt time, or child/queue backstop. */
  wakeAt?: number;
  /** For `child` steps: the child run. */
  childRunId?: string;
  /**
   * The turn of the run's execution in which this step's outcome is handed to the workflow code
   * (1, 2, ...), written with the terminal status (or by a later write for a step finished by a
   * queued worker). Absent until then. Replay hands outcomes back turn by turn, so concurrent
   * branches see them in the order the first execution did; see docs/semantics.md.
   */
  turn?: number;
  /**
   * The run's `fence` when the step was recorded (its `steps.insert`): the claim whose execution
   * recorded it. Absent for a step inserted without a fence, and on stores whose capabilities do
   * not include `insertFinished` (and for steps they recorded before). The engine compares it with
   * the run's fence to count the claims since the run last recorded a step (see docs/semantics.md).
   */
  fence?: number;
  createdAt: number;
  updatedAt: number;
}

/** The outcome of one attempt. `abandoned`: its worker died or lost its lease before finishing. */
export type AttemptStatus = 'running' | 'succeeded' | 'failed' | 'abandoned';

/** The history of a step: one record per (step, attempt number). */
export interface AttemptRecord {
  runId: string;
  stepKey: string;
  attempt: number;
  status: AttemptStatus;
  /** The worker that ran it. */
  worker?: string;
  startedAt: number;
  endedAt?: number;
  output?: Json;
  error?: ErrorRecord;
}

/**
 * What `steps.insert` records. A `running` step also opens attempt 1 in the same atomic write; a
 * step given `finishedAttempt` records that finished attempt 1 in it.
 */
export interface NewStep {
  key: string;
  name: string;
  kind: StepKind;
  seq: number;
  status: StepStatus;
  maxAttempts: number;
  queued?: boolean;
  output?: Json;
  error?: ErrorRecord;
  wakeAt?: number;
  childRunId?: string;
  /** The delivery turn (see `StepRecord.turn`), for a step recorded already finished. */
  turn?: number;
  /** Required when `status` is `running`: the worker opening attempt 1. */
  worker?: string;
  /**
   * A step recorded after its first attempt already ran (status `succeeded`, `failed` or
   * `retry_wait`): attempt 1's record, written in the same atomic write as the step, with
   * `startedAt` as given and `endedAt` = the insert's `now`. Only on stores whose capabilities
   * include `insertFinished`.
   */
  finishedAttempt?: FinishedAttempt;
}

/** Attempt 1 of a step recorded already finished (`NewStep.finishedAttempt`). */
export interface FinishedAttempt {
  status: Exclude<AttemptStatus, 'running'>;
  /** The worker that ran it. */
  worker: string;
  /** When its body started (epoch ms), before the insert's `now`. */
  startedAt: number;
  output?: Json;
  error?: ErrorRecord;
}

/** A compare-and-set on one step, written with its attempt records as one atomic unit. */
export interface StepTransition {
  key: string;
  /** The step must currently have one of these statuses and exactly this attempt number. */
  from: { status: StepStatus[]; attempt: number };
  to: {
    status: StepStatus;
    /** The new attempt number (default: unchanged). */
    attempt?: number;
    output?: Json;
    error?: ErrorRecord;
    /** `null` clears it; `undefined` leaves it. */
    wakeAt?: number | null;
    childRunId?: string;
    /** Sets the delivery turn (see `StepRecord.turn`); `undefined` leaves it. */
    turn?: number;
  };
  /** Close attempt `from.attempt` with this outcome. */
  endAttempt?: { status: Exclude<AttemptStatus, 'running'>; output?: Json; error?: ErrorRecord };
  /** Open attempt `to.attempt` (status `running`) for this worker. */
  startAttempt?: { worker: string };
}
