import type { Clock } from '../clock/clock.js';
import type { WorkflowPauseCache } from './flow/workflow-pause-cache.js';
import type { CairnError } from '../errors/cairn-error.js';
import type { RunRecord } from '../model/run.js';
import type { Queue } from '../queue/queue.js';
import type { WorkflowStore } from '../store/workflow-store.js';
import type { FaultInjector } from './fault-point.js';
import type { RuntimeLogger } from '../logging/runtime-logger.js';
import type { Lifecycle } from '../observe/lifecycle.js';
import type { RetryOptions } from './define/retry-policy.js';
import type { WorkflowRegistry } from './workflow-registry.js';
import type { StepJob } from './execution/step-job.js';
import type { StickyExecutions } from './execution/sticky-executions.js';

/**
 * Tunables shared by every part of the engine (all in milliseconds). Liveness: after a crash, or
 * the loss of one write or message, every run moves again within `leaseMs + 2 ×
 * recoveryIntervalMs` (34 s with the defaults) as long as `dispatchTimeoutMs`, `startGraceMs` and
 * `slotRecheckMs` are at most `leaseMs` (the defaults: all 30 s); see docs/semantics.md.
 */
export interface EngineTimings {
  /**
   * How long a claim lasts before another worker may take the run over (default 30 s); also how
   * long a queued attempt's heartbeat holds it (a dead step worker's attempt is abandoned after it).
   */
  leaseMs: number;
  /** A failed attempt whose backoff is at most this long is retried in place; longer ones suspend. */
  inlineRetryMaxMs: number;
  /** A queued step not started within this long is dispatched again (default 30 s). */
  dispatchTimeoutMs: number;
  /**
   * Deadline of a queued attempt without its own `timeout` (default 5 min); past it the attempt
   * counts as abandoned even while its worker lives. A dead worker's attempt is abandoned sooner,
   * once its heartbeat (every third of `leaseMs`) is `leaseMs` old.
   */
  queuedStepTimeoutMs: number;
  /**
   * Backstop of a parent waiting for a child (default 1 h), a safety net nobody relies on. A
   * child's end wakes its parent right after the child's terminal write (and `deleteRun` of a
   * child wakes it too), so the parent is not replayed while the child runs; and before that write
   * the parent is made due within `leaseMs` (`preWakeParent`), so a crash between the two delays
   * it by a lease, not by this. A parent waiting for a long child is replayed once per
   * `childBackstopMs` at most (one steps read and one run read).
   */
  childBackstopMs: number;
  /** A new run not claimed within this long is dispatched again by recovery (default 30 s). */
  startGraceMs: number;
  /**
   * An inline step is recorded once, finished, in one write; when its body is still running after
   * this long, its start is recorded meanwhile (the write overlaps the body instead of adding a
   * round trip), so a long attempt shows as `running` and a crash during it leaves an `abandoned`
   * attempt. 0: record every start before the body runs (two writes per step). See
   * docs/semantics.md, "What one write per step means for crashes".
   */
  recordStartAfterMs: number;
  /**
   * A run refused a concurrency slot looks again after at most this long (default 30 s), even if
   * the wake-up a release sends it is lost; sooner when a held slot would free itself sooner.
   */
  slotRecheckMs: number;
}

/** The run an orchestrator job is sent for (a `RunRecord` fits). */
export interface DispatchedRun {
  id: string;
  workflow: string;
  /** `RunRecord.priority`: the job's queue priority. */
  priority?: number;
}

/** The internals an execution needs; built once by `createEngine`. */
export interface EngineRuntime {
  readonly store: WorkflowStore;
  readonly queue: Queue;
  readonly clock: Clock;
  readonly workerId: string;
  readonly timings: EngineTimings;
  readonly maxPayloadBytes: number;
  /** The engine's default retry options (`createEngine({ defaultRetry })`), checked. */
  readonly defaultRetry?: RetryOptions;
  readonly faults: FaultInjector;
  readonly registry: WorkflowRegistry;
  readonly logger: RuntimeLogger;
  /** Publishes lifecycle events (check its `runs` / `steps` / `recovery` before building one). */
  readonly lifecycle: Lifecycle;
  /**
   * Runs being executed by this process, so a duplicate job does not execute one twice at once;
   * `abandon` ends the execution at once (its step bodies' signals abort, it writes nothing more);
   * `observePause` stops it before its next primitive (see `Execution.observePause`).
   */
  readonly executing: Map<string, { observeCancel(error: CairnError): void; abandon(error: unknown): void; observePause(): void }>;
  /** Aborts when `engine.stop()` gives up waiting for in-flight work (after its grace period). */
  readonly shutdown: () => AbortSignal;
  /** Executions whose workflow code is running a turn or about to (see TurnScheduler); a count. */
  readonly turnsInProgress: { count: number };
  /** Suspended executions kept for their run's next claim (`stickyExecutions`); undefined when off. */
  readonly sticky: StickyExecutions | undefined;
  /** Runs asked to execute again once their current local execution ends. */
  readonly rerun: Set<string>;
  /** The paused workflows as this engine knows them (see `WorkflowPauseCache`). */
  readonly workflowPauses: WorkflowPauseCache;
  /**
   * Sends the run's orchestrator job (optionally delayed), at the run's priority when the queue
   * has priorities (absent: 0).
   */
  dispatchRun(run: DispatchedRun, delayMs?: number): Promise<void>;
  /**
   * Sends a queued step's job (optionally delayed) — to the push executing its run in this process
   * when there is one (`engine.pushed`), else to the queue — at `job.priority` on a queue with priorities;
   * the job carries the dispatching execution's trace context and the run's priority.
   */
  dispatchStep(job: StepJob, delayMs?: number): Promise<void>;
  /** Tells in-process result waiters that a run ended. */
  notifyFinished(run: RunRecord): void;
  /** Tells in-process result waiters that this process's execution of a run stopped (ended or not). */
  executionLeft(runId: string): void;
}
