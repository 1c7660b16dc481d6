// The types a workflow is written against: its context (`ctx`), its definition, and the shapes of
// `ctx.select`. One file because they refer to each other (a definition's handler takes a context,
// whose `child` takes a definition): apart, they were an import cycle.
import type { CairnError } from '../../errors/cairn-error.js';
import type { ErrorRecord } from '../../model/error-record.js';
import type { StandardSchemaV1 } from '../../validation/standard-schema.js';
import type { WorkflowOptions } from './workflow-options.js';
import type { Json } from '../../model/json.js';
import type { Jsonify, JsonifyPayload, JsonGate } from '../../serialization/json-types.js';
import type { Duration } from './duration.js';
import type { StepRateLimit } from '../flow/flow-options.js';
import type { BackoffOptions, RetryPredicate } from './retry-policy.js';
import type { EventDefinition } from './event-definition.js';
import type { RequestDefinition } from './request-definition.js';

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
  /**
   * Extra attempts after the first (default: the engine's `defaultRetry.retries`, else 0). Fixed
   * when the step is first recorded. A `NonRetryableError` (any error with `nonRetryable: true`)
   * is never retried.
   */
  retries?: number;
  /**
   * Wait between attempts (default: the engine's `defaultRetry.backoff`, else fixed 1 s). A body
   * that throws a `RetryAfterError` (any error with a `retryAfter` duration) waits that instead.
   */
  backoff?: BackoffOptions;
  /**
   * Whether the error an attempt failed with may be retried (default: the engine's
   * `defaultRetry.retryIf`, else every error but a non-retryable one). Called with attempts left
   * only; a predicate that throws counts as `false`. Same decision inline and queued.
   */
  retryIf?: RetryPredicate;
  /** Per attempt; an attempt that exceeds it fails with `STEP_TIMEOUT` (and may be retried). */
  timeout?: Duration;
  /** Run the body on the step queue (any worker) instead of inline in the orchestrator. */
  queued?: boolean;
  /**
   * Undoes the step once it has succeeded, if the run later fails or is cancelled (a saga): the
   * compensations of a run's succeeded steps run in reverse call order (`seq`), each recorded
   * once as the step `<key>:compensate` (with the step's retry policy; its body runs at least
   * once), and a failing one does not stop the others: it is recorded `failed` and listed in the
   * run error's `data.compensationFailures`. A step that failed is not compensated (it did not
   * complete). `error` is the run's error (its failure, or the cancellation).
   */
  compensate?: (error: Error) => unknown;
  /**
   * At most `limit` attempts of steps naming `key` start in any window of `period`, across every
   * run and engine on the store (an outside API's quota). A refused attempt does not run its body:
   * it waits for the next free slot (in place when it frees within `timings.inlineRetryMaxMs`, else
   * the run sleeps until then; a `queued` step's job is sent again for then) and is never dropped.
   * Needs a store with `slots`. See docs/flow-control.md.
   */
  rateLimit?: StepRateLimit;
}

/** Options of `ctx.waitForEvent`. */
export interface WaitForEventOptions {
  /** Give up after this long: the wait throws `EVENT_TIMEOUT`. Default: wait forever. */
  timeout?: Duration;
}

/** Options of `ctx.child` and `ctx.childOutcome`. */
export interface ChildOptions {
  /** The step name (default `child:<workflow>`). */
  name?: string;
}

/** Options of `ctx.startChild`. */
export interface StartChildOptions {
  /** The step name (default `startChild:<workflow>`). */
  name?: string;
}

/** How a child run ended, as `ctx.childOutcome` returns it. */
export type ChildOutcome<O> =
  /** The child completed with `output`. */
  | { ok: true; output: O }
  /**
   * The child failed, was cancelled, or was deleted while it ran (`status`). `error` is the
   * `CHILD_FAILED` error `ctx.child` would throw (its `cause` is the child's own error, its
   * `data` is `{ runId, childRunId, status }`).
   */
  | { ok: false; status: ChildEndStatus; error: CairnError };

/** One named stream of the run, as `ctx.stream(name)` gives it. */
export interface WorkflowStream<T = Json> {
  readonly name: string;
  /** `ctx.emit(name, chunk)`. */
  write(chunk: T & JsonGate<T, 'stream chunk'>): Promise<void>;
  /** `ctx.closeStream(name)`. */
  close(): Promise<void>;
}

/**
 * A request the workflow took with `ctx.receiveRequest` (docs/semantics.md, Requests): answer it
 * with exactly one `reply` or `reject`.
 */
export interface ReceivedRequest<T = Json, R = Json> {
  /** The request's id (the same on every replay). */
  readonly id: string;
  /** The request name. */
  readonly name: string;
  /** What the caller sent (after the definition's schema), as its JSON round trip; `null` for none. */
  readonly payload: T;
  /**
   * Answers the request: `engine.request` resolves with `value`'s JSON round trip. Written once,
   * durably, in one store write; a replay that replies again writes nothing, so the caller gets the
   * first reply. At most `STREAM_LIMITS.maxChunkBytes` less 64 bytes of JSON (`PAYLOAD_TOO_LARGE`,
   * nothing written); a second answer to one request is `INVALID_INPUT`.
   */
  reply(value: R & JsonGate<R, 'request reply'>): Promise<void>;
  /**
   * Refuses the request: `engine.request` throws `REQUEST_REJECTED` whose `cause` is `error` (as an
   * error record carries it). Written like `reply`.
   */
  reject(error: unknown): Promise<void>;
}

/** How a child run ended without completing. */
export type ChildEndStatus = 'failed' | 'cancelled' | 'deleted';

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
   * result exactly once. Its result must be JSON (or `undefined`), and the workflow gets its JSON
   * round trip, typed `Jsonify<T>`: `undefined` properties left out (`{ note: string | undefined }`
   * arrives as `{ note?: string }`), `undefined` array items `null`. A result type JSON cannot carry
   * (a `Date`, a `Map`, a class instance with methods, a function, a bigint) is a compile error
   * naming the part; a result JSON cannot carry that the types did not catch (a cycle, `NaN`, a
   * class instance) fails the step with `NOT_SERIALIZABLE` naming its path, after the body ran and
   * without a retry.
   */
  step<T>(name: string, fn: ((step: StepContext) => Promise<T> | T) & JsonGate<T, 'step result'>, options?: StepOptions): Promise<Jsonify<T>>;
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
   * `defineEvent` definition (which types the payload; its schema was applied on send), or a name
   * with the payload type given as a type argument (a type JSON cannot carry is a compile error).
   * Resolves with the payload's JSON round trip (`null` for a message sent without one). The name
   * follows `checkEventName`, the same rule as `engine.sendEvent` (`INVALID_INPUT` otherwise).
   * Throws `EVENT_TIMEOUT` after `timeout`.
   */
  // biome-ignore lint/suspicious/noExplicitAny: whatever the definition's schema takes; the wait receives what it gave
  waitForEvent<T = Json>(event: EventDefinition<T, any> | (string & JsonGate<T, 'event payload'>), options?: WaitForEventOptions): Promise<JsonifyPayload<T>>;
  /**
   * Starts a child run (once, also across crashes) and resolves with its output. A failed,
   * cancelled or deleted child throws `CHILD_FAILED`; cancelling this run cancels its children.
   * The run waits without a worker and without replays: the child's end wakes it (a crash in
   * between is covered by `timings.childBackstopMs`). `input` is what the child's definition takes;
   * the output arrives as its JSON round trip (`Jsonify<O>`). By name, the input must be a type
   * JSON carries (a compile error otherwise) and the output is `unknown` unless given.
   */
  child<I, O>(workflow: WorkflowOf<I, O> | (string & JsonGate<I, 'child input'>), input: I, options?: ChildOptions): Promise<Jsonify<O>>;
  /**
   * Like `child`, but the child's end is returned as a value instead of thrown: `{ ok: true,
   * output }`, or `{ ok: false, status, error }` for a failed, cancelled or deleted child (`error`
   * is the `CHILD_FAILED` error `child` would throw). Recorded like `child` (the same step kind
   * and default name, so the two share key numbering): a replay returns the same outcome.
   * Anything else (this run cancelled, bad arguments) still throws.
   */
  childOutcome<I, O>(workflow: WorkflowOf<I, O> | (string & JsonGate<I, 'child input'>), input: I, options?: ChildOptions): Promise<ChildOutcome<Jsonify<O>>>;
  /**
   * Starts a detached child run and resolves with its run id, without waiting for it. Created once,
   * also across crashes (idempotency key `$child:<this run's id>:<step key>`), and recorded as a
   * succeeded `child` step whose output and `childRunId` are the id: a replay returns the same id.
   * A detached child is on its own: it has no `parent` (its end wakes no run), it is not cancelled
   * when this run is cancelled, fails or completes, and it does not take this run's deadline (only
   * its own workflow's default). Follow it with `engine.getRun(id)` / `engine.result(id)`.
   */
  // biome-ignore lint/suspicious/noExplicitAny: any output: it is not awaited here
  startChild<I>(workflow: WorkflowOf<I, any> | (string & JsonGate<I, 'child input'>), input: I, options?: StartChildOptions): Promise<string>;
  /**
   * Sets one state key durably and atomically (other keys are untouched). The value is a JSON
   * payload (docs/semantics.md, Payloads): a type JSON cannot carry is a compile error, and
   * `NOT_SERIALIZABLE` at run time.
   */
  setState<T>(key: string, value: T & JsonGate<T, 'state value'>): Promise<void>;
  /**
   * The latest value of a state key (`undefined` if never set), as the JSON round trip of what was
   * set: a `T` given as a type argument reads as `Jsonify<T>` (a type JSON cannot carry is a compile
   * error).
   */
  state<T = Json>(key: string & JsonGate<T, 'state value'>): Promise<Jsonify<T> | undefined>;
  /**
   * Appends `chunk` to the run's stream `stream` (docs/semantics.md, Streams), durably, in one store
   * write: readers (`engine.readStream`) get it with its index, the k-th `emit` of a stream in call
   * order being chunk k. A replay that calls it again writes nothing (the place is taken), so each
   * chunk reaches readers once; a step body cannot emit (a retried attempt would repeat chunks):
   * emit a step's result after the step. The chunk is a JSON payload of at most
   * `STREAM_LIMITS.maxChunkBytes` (and the store's limit): else `STREAM_LIMIT`, nothing written; a
   * stream holds at most `STREAM_LIMITS.maxChunks` chunks (`STREAM_LIMIT` past it); a closed stream
   * refuses more (`STREAM_CONFLICT`). Needs a store with streams (`STREAM_UNSUPPORTED` otherwise).
   */
  emit<T>(stream: string, chunk: T & JsonGate<T, 'stream chunk'>): Promise<void>;
  /**
   * Ends the run's stream `stream`: readers that reach its end stop there. Closing a closed stream
   * changes nothing. A stream left open ends for readers when the run ends.
   */
  closeStream(stream: string): Promise<void>;
  /** `emit` and `closeStream` bound to one stream name. */
  stream<T = Json>(name: string): WorkflowStream<T>;
  /**
   * Sets tags on the run (each added, or replacing that key's value; none removed), durably, in one
   * store write, so `engine.listRuns({ tags })` finds the run by them from then on. Positional, like
   * `emit`: the k-th `setTags` of the run is tag write k, and a replay that calls it again writes
   * nothing (the place is taken), so a replay never rewrites or reorders the run's tags. Tags are
   * string keys to string values within `TAG_LIMITS` (`INVALID_INPUT` for another shape, `TAG_LIMIT`
   * past a bound, counting the run's tags after the write); nothing is written then. Needs a store
   * that keeps tags (`TAGS_UNSUPPORTED` otherwise). See docs/operating.md, Finding runs.
   */
  setTags(tags: Record<string, string>): Promise<void>;
  /**
   * Exposes `value` as the run's current answer to the query `name`: `engine.query(runId, name)`
   * reads it from the store, without waking the run, until the next `expose` of that name replaces
   * it (docs/semantics.md, Queries). One store write; positional like `emit` (the k-th expose of a
   * name is its k-th value, and a replay that calls it again writes nothing), so a query never sees
   * an earlier value come back. A JSON payload of at most `STREAM_LIMITS.maxChunkBytes`, at most
   * `STREAM_LIMITS.maxChunks` exposes of one name per run (`STREAM_LIMIT`, nothing written; a
   * long-lived run continues as new). Needs a store with streams (`STREAM_UNSUPPORTED` otherwise).
   */
  expose<T>(name: string, value: T & JsonGate<T, 'exposed value'>): Promise<void>;
  /**
   * Waits for the next request of `request` (a name, or a `defineRequest` definition that types the
   * payload and the reply) sent by `engine.request`, and resolves with it and the means to answer it
   * (docs/semantics.md, Requests). The k-th request the run takes is the k-th message of that name
   * that its caller did not withdraw first (a caller whose timeout passed before any execution took
   * its request withdraws it; such a request is passed over, and no code ever sees it). Recorded: a
   * replay receives the same requests in the same order. Until one comes the run suspends, like
   * `waitForEvent`. Needs a store with streams (`REQUEST_UNSUPPORTED` otherwise).
   */
  receiveRequest<T = Json, R = Json>(
    // biome-ignore lint/suspicious/noExplicitAny: whatever the definition's schema takes; the workflow receives what it gave
    request: RequestDefinition<T, R, any> | (string & JsonGate<T, 'request payload'>),
  ): Promise<ReceivedRequest<JsonifyPayload<T>, R>>;
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
   * last run's outcome. The returned promise never settles: nothing after the call runs. `input`
   * goes through the JSON round trip (a type JSON cannot carry is a compile error).
   */
  continueAsNew<I>(input: I & JsonGate<I, 'input'>): Promise<never>;
  /**
   * Waits for whichever comes first of several events, timers and children (`{ event }`,
   * `{ timer }`, `{ until }`, `{ child, input }`, keyed by names you choose) and resolves with
   * `{ winner, kind, value }`. The winner is recorded under `name` and returned again on every
   * replay. When several are ready at one look, the first in the order given wins. Losers are
   * cancelled: a losing child is cancelled, a losing timer is dropped, and a losing event's message
   * is not taken (the next wait or select of that name receives it). The result is typed by the
   * alternatives: `winner` narrows `kind` and `value` (an event definition's payload, a child
   * definition's output, each as its JSON round trip).
   */
  select<A extends Record<string, SelectAlternative>>(name: string, alternatives: A): Promise<SelectOutcome<A>>;
  /**
   * A patch marker: whether this run takes the code path of patch `id` (a change made while runs
   * were in flight). `true` when the run's history holds the marker at this point, or when this
   * execution is past everything the history recorded (the first execution of a new run, or a run
   * that has not reached this point yet): the marker is then recorded here, so every later replay
   * answers `true` again. `false` when the history was written by code without the patch (it
   * recorded another call here): replay goes down the old path. The first answer for an `id` holds
   * for the rest of the execution (a loop asks once). Synchronous, and recorded with no turn of
   * its own. `id`: a non-empty string of at most 500 characters (`INVALID_INPUT` otherwise). See
   * docs/versioning.md.
   */
  patched(id: string): boolean;
  /**
   * Retires a patch once no run that could take its old path is left: the new path is the only
   * one, and histories that hold the marker of `id` here still replay (the marker is passed over).
   * Records nothing. Remove the call itself only when no run that recorded the marker is left.
   */
  deprecatePatch(id: string): void;
}

/**
 * A registered workflow: name, version, options and handler. `I` is the input `startRun` and
 * `ctx.child` take, `O` the output the run ends with (`result()` gives its JSON round trip,
 * `Jsonify<O>`), and `HandlerInput` what the handler receives: `I`, unless an `input` schema
 * stands between them (it takes an `I` and gives a `HandlerInput`).
 */
export interface WorkflowDefinition<I = unknown, O = unknown, HandlerInput = I> {
  readonly name: string;
  readonly version: string;
  // biome-ignore lint/suspicious/noExplicitAny: the output schema takes what the handler returned, which the definition's types no longer name
  readonly options: Readonly<WorkflowOptions<HandlerInput> & { input?: StandardSchemaV1<I, HandlerInput>; output?: StandardSchemaV1<any, O> }>;
  /** The workflow's code, with the `output` schema applied to what it returns when there is one. */
  readonly handler: (ctx: WorkflowContext, input: HandlerInput) => Promise<O>;
}

/**
 * A workflow definition of any input and output type: what code holding several workflows side by
 * side takes (`createEngine({ workflows })`, `ctx.child`, a registry). Any `WorkflowDefinition<I, O>`
 * is assignable to it. `any` is right here and `unknown` is not: the handler takes the input as a
 * parameter, and a parameter is contravariant, so `WorkflowDefinition<{ id: string }>` is not a
 * `WorkflowDefinition<unknown>`; TypeScript has no existential type ("some input type"). It checks
 * nothing about the input: code that knows its workflow uses `WorkflowDefinition<I, O>`.
 */
// biome-ignore lint/suspicious/noExplicitAny: the handler's input is a contravariant parameter and TypeScript has no existential type; see the TSDoc above
export type AnyWorkflowDefinition = WorkflowDefinition<any, any>;

/**
 * A workflow definition that takes `I` (at `startRun`, `ctx.child`) and ends with `O`, whatever
 * its handler receives in between (an `input` schema may transform `I`): what code that starts a
 * workflow takes. `any` for the handler's input for the reason above.
 */
// biome-ignore lint/suspicious/noExplicitAny: the handler's input is a contravariant parameter, and a caller deals only in what the definition takes
export type WorkflowOf<I, O> = WorkflowDefinition<I, O, any>;

/** One thing `ctx.select` waits for. */
export type SelectAlternative =
  /** The next message of this event that no wait has taken yet; it is taken only if it wins. */
  // biome-ignore lint/suspicious/noExplicitAny: events with different payload types side by side; TypeScript has no existential type
  | { event: string | EventDefinition<any> }
  /** A durable timer of this length, counted from the first execution's call. */
  | { timer: Duration }
  /** A durable timer until this time. */
  | { until: Date | number }
  /**
   * A child run started by the select, with `input` (what its definition takes; no input is
   * `null`); it is cancelled if another alternative wins.
   */
  | { child: AnyWorkflowDefinition | string; input?: unknown };

/** How a child alternative ended, as `ctx.select` gives it: `output` is the child's output after the JSON round trip (`null` for none). */
export type SelectChildValue<O = Json> = { ok: true; output: O } | { ok: false; status: 'failed' | 'cancelled' | 'deleted'; error: ErrorRecord | null };

/** The `kind` and `value` one alternative wins with. */
type SelectWin<A> = A extends { event: infer E }
  ? { kind: 'event'; value: E extends EventDefinition<infer T, infer _In> ? JsonifyPayload<T> : Json }
  : A extends { timer: unknown } | { until: unknown }
    ? { kind: 'timer'; value: null }
    : A extends { child: infer C }
      ? { kind: 'child'; value: SelectChildValue<C extends WorkflowOf<infer _I, infer O> ? JsonifyPayload<O> : Json | null> }
      : never;

/**
 * What `ctx.select(name, alternatives)` resolves with, typed by the alternatives: one member per
 * key, `winner` narrowing `kind` and `value` (an event definition's payload, a child definition's
 * output, each after the JSON round trip; `Json` for an event or child given by name).
 */
export type SelectOutcome<A extends Record<string, SelectAlternative>> = {
  [K in keyof A & string]: { winner: K } & SelectWin<A[K]>;
}[keyof A & string];

/** What `ctx.select` resolves with, for alternatives of any kind: which alternative won, and its value. */
export type SelectResult<K extends string = string> =
  | { winner: K; kind: 'event'; value: Json }
  | { winner: K; kind: 'timer'; value: null }
  | {
      winner: K;
      kind: 'child';
      value: SelectChildValue<Json | null>;
    };
