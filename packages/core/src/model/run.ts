import type { ErrorRecord } from './error-record.js';
import type { Json } from './json.js';
import type { RunPause } from './pause.js';

/**
 * Run statuses. `pending` → `running` ⇄ `waiting` → `completed` | `failed` | `cancelled`.
 * The three terminal statuses are final: no store write may change a terminal run.
 */
export type RunStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';

/** The statuses no write may leave. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

/** True when `status` is terminal (`completed`, `failed` or `cancelled`). */
export function isTerminalRunStatus(status: RunStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** The parent of a child run: the run and the step key that started it. */
export interface ParentRef {
  runId: string;
  stepKey: string;
}

/** A lease on a run: who executes it and until when (epoch milliseconds). */
export interface Lease {
  owner: string;
  expiresAt: number;
}

/** One execution of a workflow, as stored. Times are epoch milliseconds. */
export interface RunRecord {
  /** Time-sortable unique id (UUIDv7). */
  id: string;
  workflow: string;
  /** The workflow version the run is pinned to. */
  version: string;
  input: Json;
  status: RunStatus;
  /** The handler's result once `completed`; `undefined` means the handler returned nothing. */
  output?: Json;
  /** Why the run `failed` (or was `cancelled`). */
  error?: ErrorRecord;
  parent?: ParentRef;
  /** Unique per workflow: a second create with the same key returns the first run. */
  idempotencyKey?: string;
  /** The current lease, absent when nobody holds one. */
  lease?: Lease;
  /**
   * The fencing token: incremented by every successful claim. A write carrying an older token is
   * refused with `LEASE_LOST`.
   */
  fence: number;
  cancelRequested: boolean;
  /**
   * Why cancellation was requested: the reason the first `requestCancel` carried, kept as written.
   * Absent when none was given (or no cancel was requested).
   */
  cancelReason?: string;
  /**
   * Set while the run is paused (`PauseStore.pauseRun`): a paused run is never claimed and never
   * due (`runs.claim` refuses it, `runs.findDue` leaves it out), whatever its status, lease or
   * `wakeAt`; every other write goes on as before (an execution holding the lease records what it
   * is doing and suspends). Absent when the run is not paused. `PauseStore.resumeRun` removes it.
   */
  paused?: RunPause;
  /**
   * The time (epoch milliseconds) by which the run must end: past it the engine fails the run with
   * `DEADLINE_EXCEEDED`. Set at creation and never changed. Absent: no deadline.
   */
  deadline?: number;
  /**
   * When the run next needs attention (timer, retry, backstop), or a wake-up requested while it
   * ran. Absent when the run waits for nothing that has a time.
   */
  wakeAt?: number;
  /**
   * The W3C trace context (`traceparent`, optionally `tracestate`) of the code that started the
   * run, kept as given so whichever process executes the run continues that trace. Absent when
   * there was none.
   */
  traceContext?: Record<string, string>;
  /**
   * Set on a run made by `engine.forkRun`: the run it was forked from and the step key it was
   * forked at (that step and every later one ran with the fork's code). Written at creation, never
   * changed.
   */
  forkedFrom?: ForkOrigin;
  /**
   * Higher is dispatched sooner and goes first in line for a concurrency slot: an integer from
   * -1000 to 1000, absent meaning 0 (`StartOptions.priority`).
   */
  priority?: number;
  /**
   * Every `engine.retryRun` of this run, oldest first: when, the status and error it was retried
   * from, and the reason given. Absent when never retried. Only `runs.reopen` appends to it.
   */
  retries?: RetryRecord[];
  /**
   * The run's tags (docs/operating.md, Finding runs): string keys to string values, set by
   * `StartOptions.tags` and `ctx.setTags`, within `TAG_LIMITS`. `listRuns({ tags })` finds runs by
   * them through an index on every backend. Absent when the run has none.
   */
  tags?: RunTags;
  /**
   * How many `ctx.setTags` writes the run has taken (`RunStore.setTags`), which is the position of
   * the next one: a replay's k-th call finds its place taken (k below this) and writes nothing.
   * Absent: none.
   */
  tagWrites?: number;
  createdAt: number;
  updatedAt: number;
}

/** A run's tags: keys to values, both strings (`TAG_LIMITS` bounds them). */
export type RunTags = Record<string, string>;

/**
 * One `ctx.setTags` call as `runs.setTags` takes it: its position among the run's tag writes (0 for
 * the first, in call order) and the tags it sets (added, or replacing the value of a key the run
 * has).
 */
export interface TagWrite {
  seq: number;
  tags: RunTags;
}

/** Where a forked run came from (`RunRecord.forkedFrom`). */
export interface ForkOrigin {
  /** The source run. */
  runId: string;
  /** The step key of the source the fork re-executed from. */
  stepKey: string;
}

/** One `engine.retryRun` of a run, as `RunRecord.retries` keeps it. */
export interface RetryRecord {
  /** When the run was reopened (epoch milliseconds). */
  at: number;
  /** The terminal status the run was retried from. */
  previousStatus: 'failed' | 'cancelled';
  /** The run's error at that moment (why it failed or was cancelled). */
  previousError?: ErrorRecord;
  /** The reason the operator gave. */
  reason?: string;
  /** The step keys whose records were forgotten, so that they run again. */
  forgottenSteps: string[];
  /** Child runs retried with it (failed or cancelled children of steps that run again). */
  retriedChildren?: string[];
}

/** An error as a `RunSummary` carries it: no stack, data or cause. */
export interface ErrorSummary {
  name: string;
  code?: string;
  message: string;
}

/**
 * A run as `runs.list` returns it: the record without its payloads (`input`, `output`, the
 * retry records) and with the error reduced to name, code and message. `engine.getRun` gives the
 * whole record.
 */
export type RunSummary = Omit<RunRecord, 'input' | 'output' | 'error' | 'retries'> & { error?: ErrorSummary };

/**
 * What `runs.reopen` does to a failed or cancelled run (see `RunStore.reopen`): the fence it must
 * still have, the step records to forget, the retry record to append, and its deadline.
 */
export interface RunReopen {
  /** The run's current fence, as read by the caller: a run reopened (or changed) since is refused. */
  fence: number;
  /** Keys of the step records (with their attempt records) to delete, so those steps run again. */
  forget: string[];
  /** Appended to `RunRecord.retries`. */
  retry: RetryRecord;
  /** `undefined`: keep the deadline; `null`: remove it; a number: the new deadline. */
  deadline?: number | null;
}

/** A terminal run as `runs.listEnded` returns it (for retention). */
export interface EndedRun {
  id: string;
  workflow: string;
  status: RunStatus;
  updatedAt: number;
  parent?: ParentRef;
}

/** Which ended runs `runs.listEnded` returns: of one terminal status, last changed before a time. */
export interface EndedRunQuery {
  status: RunStatus;
  /** Only runs whose `updatedAt` is strictly before this time. */
  updatedBefore: number;
  /** At most this many (1..1000). */
  limit: number;
  /** The `nextCursor` of the previous batch (opaque, backend-specific). */
  cursor?: string;
}

/** One batch of `runs.listEnded`. */
export interface EndedRunPage {
  runs: EndedRun[];
  /** Present when more runs may follow. */
  nextCursor?: string;
}

/** A condition on `runs.delete`: delete only a run that ended (one of `statuses`) before a time. */
export interface DeleteCondition {
  statuses: RunStatus[];
  /** The run's `updatedAt` must be strictly before this. */
  updatedBefore: number;
}

/** What `runs.create` needs. */
export interface NewRun {
  id: string;
  workflow: string;
  version: string;
  input: Json;
  parent?: ParentRef;
  idempotencyKey?: string;
  /** Usually `now`: a new run is due at once, so recovery dispatches it if its first job is lost. */
  wakeAt?: number;
  /** Stored as `RunRecord.deadline` (epoch milliseconds); the store only keeps it. */
  deadline?: number;
  /** Stored as `RunRecord.traceContext`, unchanged (a flat object of strings). */
  traceContext?: Record<string, string>;
  /** Stored as `RunRecord.forkedFrom`. */
  forkedFrom?: ForkOrigin;
  /** Stored as `RunRecord.priority` (absent or 0: stored absent). */
  priority?: number;
  /** Stored as `RunRecord.tags` (absent or empty: stored absent) and indexed for `runs.list`. Only given to a store with `runs.setTags`. */
  tags?: RunTags;
}

/** Filters for `runs.list`. Results are newest first (`createdAt` desc, then `id` desc). */
export interface RunQuery {
  workflow?: string;
  status?: RunStatus | RunStatus[];
  /** Only runs created at or after this time. */
  createdAfter?: number;
  /** Only runs created strictly before this time. */
  createdBefore?: number;
  /** Only children of this run (`RunRecord.parent.runId`). */
  parentRunId?: string;
  /** Only the run with this idempotency key; requires `workflow` (keys are unique per workflow). */
  idempotencyKey?: string;
  /**
   * Only runs carrying every one of these tags with exactly these values (AND; compared as stored,
   * case and all). Served by the store's tag index; only given to a store with `runs.setTags`.
   */
  tags?: RunTags;
  /** Page size, 1..1000 (default 50). */
  limit?: number;
  /** The `nextCursor` of a previous page. */
  cursor?: string;
}

/** One page of `runs.list`. */
export interface RunPage {
  /** Summaries, without payloads: `getRun` gives a whole record. */
  runs: RunSummary[];
  /** Present when more runs may follow. */
  nextCursor?: string;
}

/** The target of `runs.transition`. */
export interface RunTransition {
  /** Statuses the run must currently have. */
  from: RunStatus[];
  to: RunStatus;
  output?: Json;
  error?: ErrorRecord;
  /**
   * For `waiting`: when to wake. The store keeps the earlier of this and any wake-up requested
   * since the claim (see `RunStore.wake`). Ignored for other statuses.
   */
  wakeAt?: number;
}

/** A run the recovery loop should dispatch. */
export interface DueRun {
  id: string;
  workflow: string;
  /** Why it is due: its timer passed or its lease expired. */
  reason: 'wake' | 'lease-expired';
}

/** What `PauseStore.pauseRun` and `resumeRun` return. */
export interface PauseChange {
  /** The run after the call (unchanged when `changed` is false). */
  run: RunRecord;
  /** False when the call wrote nothing (the run was paused already, or was not paused). */
  changed: boolean;
}
