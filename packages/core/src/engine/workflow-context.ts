import type { Json } from '../model/json.js';
import type { Duration } from './duration.js';
import type { BackoffOptions } from './retry-policy.js';
import type { WorkflowDefinition } from './define-workflow.js';
import type { EventDefinition } from './event-definition.js';

/** What a step body receives. */
export interface StepContext {
  readonly runId: string;
  /** The step's key (`name`, or `name#2` for its second occurrence). */
  readonly key: string;
  /** The attempt number, starting at 1. */
  readonly attempt: number;
  /** Aborted when the step times out or the run is cancelled: pass it to fetch, db drivers, ... */
  readonly signal: AbortSignal;
}

/** Options of `ctx.step`. */
export interface StepOptions {
  /** Extra attempts after the first (default 0). Fixed when the step is first recorded. */
  retries?: number;
  /** Wait between attempts (default fixed 1 s). */
  backoff?: BackoffOptions;
  /** Per attempt; an attempt that exceeds it fails with `STEP_TIMEOUT` (and may be retried). */
  timeout?: Duration;
  /** Run the body on the step queue (any worker) instead of inline in the orchestrator. */
  queued?: boolean;
  /**
   * Runs once, durably (as its own step `<key>:compensate`, with the same retry policy), after the
   * step has failed its last attempt; then the step's error is thrown to the workflow as usual.
   */
  compensate?: (error: Error) => unknown;
}

/** Options of `ctx.waitForEvent`. */
export interface WaitForEventOptions {
  /** Give up after this long: the wait throws `EVENT_TIMEOUT`. Default: wait forever. */
  timeout?: Duration;
}

/** Options of `ctx.child`. */
export interface ChildOptions {
  /** The step name (default `child:<workflow>`). */
  name?: string;
}

/**
 * The primitives a workflow handler uses. Every primitive but `setState`/`state` records a step;
 * on replay, recorded steps return their recorded result without running again. Call primitives in
 * a deterministic order (branch only on their results and the input); `Promise.all` over them is fine.
 */
export interface WorkflowContext {
  readonly runId: string;
  readonly workflow: string;
  readonly version: string;
  /** Aborted when cancellation of the run is observed. */
  readonly signal: AbortSignal;
  /**
   * Runs `fn` at least once until one attempt succeeds or the attempts are used up, and records its
   * result exactly once. Its result must be JSON (or `undefined`).
   */
  step<T>(name: string, fn: (step: StepContext) => Promise<T> | T, options?: StepOptions): Promise<T>;
  /** A durable timer: the run sleeps (without holding a worker) and resumes after `duration`. */
  sleep(name: string, duration: Duration): Promise<void>;
  /** A durable timer until a point in time. */
  sleepUntil(name: string, until: Date | number): Promise<void>;
  /**
   * Waits for the next message of an event: the k-th wait of a name in this run (its step key
   * `event:<name>`, `event:<name>#2`, ...) resolves with the payload of the k-th message of that
   * name sent to the run, whether it was sent before or after the wait began; until it arrives the
   * run suspends (no worker held, nothing recorded but the wait). A wait that timed out keeps its
   * place: the k-th message, if it comes later, goes to no other wait. `event` is a name or a
   * `defineEvent` definition (which types the payload; its schema was applied on send). The name
   * follows `checkEventName`, the same rule as `engine.sendEvent` (`INVALID_INPUT` otherwise).
   * Throws `EVENT_TIMEOUT` after `timeout`.
   */
  waitForEvent<T extends Json = Json>(event: string | EventDefinition<T>, options?: WaitForEventOptions): Promise<T>;
  /**
   * Starts a child run (once) and resolves with its output. A failed or cancelled child throws
   * `CHILD_FAILED`; cancelling this run cancels its children.
   */
  child<I extends Json, O>(workflow: WorkflowDefinition<I, O> | string, input: I, options?: ChildOptions): Promise<O>;
  /** Sets one state key durably and atomically (other keys are untouched). */
  setState(key: string, value: Json): Promise<void>;
  /** The latest value of a state key (`undefined` if never set). */
  state<T extends Json = Json>(key: string): Promise<T | undefined>;
  /** The current time, recorded: a replay sees the same value. */
  now(): Promise<number>;
  /** A random number in [0, 1), recorded. */
  random(): Promise<number>;
  /** A random UUID, recorded. */
  uuid(): Promise<string>;
  /**
   * Ends this run and starts its successor: a new run of the same workflow (on the version new runs
   * start on) with `input` and an empty history, so an endless workflow keeps a bounded history.
   * Exactly one successor is created, also across crashes (its idempotency key is
   * `$continue:<this run's id>`, and this run records a `$continue` step naming it). This run
   * completes with `{ $continuedAs: <successor id> }`; `engine.result()` follows the chain to the
   * last run's outcome. The returned promise never settles: nothing after the call runs.
   */
  continueAsNew(input: Json): Promise<never>;
}
