// The engine's public contract: its options and the methods every engine offers. Implemented by
// createEngine (engine.ts).
import type { Clock } from '../clock/clock.js';
import type { PayloadCodec } from '../codec/payload-codec.js';
import type { Json } from '../model/json.js';
import type { Jsonify, JsonGate } from '../serialization/json-types.js';
import type { PauseChange, RunPage, RunQuery, RunRecord } from '../model/run.js';
import type { AttemptRecord, StepKind, StepRecord } from '../model/step.js';
import type { Queue, GroupConcurrency } from '../queue/queue.js';
import type { WorkflowStore } from '../store/workflow-store.js';
import type { AnyWorkflowDefinition, WorkflowOf } from './define/any-workflow-definition.js';
import type { EngineTimings } from './engine-runtime.js';
import type { EngineLogger } from '../logging/engine-logger.js';
import type { FaultInjector } from './fault-point.js';
import type { QueueStrategy } from './queue-names.js';
import type { RetryRunOptions } from './operations/retry-run.js';
import type { ForkOptions } from './operations/fork-run.js';
import type { PruneOptions, RetentionOptions } from './operations/prune-runs.js';
import type { ScheduleDefinition } from '../schedule/define-schedule.js';
import type { EngineSchedules } from '../schedule/engine-schedules.js';
import type { EngineVersions } from './operations/engine-versions.js';
import type { Duration } from './define/duration.js';
import type { RetryOptions } from './define/retry-policy.js';
import type { EventDelivery } from '../model/event.js';
import type { EventDefinition } from './define/event-definition.js';
import type { SendEventOptions } from './messages/send-event.js';
import type { RequestDefinition } from './define/request-definition.js';
import type { RequestOptions } from './messages/send-request.js';
import type { QueryAnswer } from './messages/query-run.js';
import type { DeadlineInput } from './execution/run-deadline.js';
import type { DoctorOptions, DoctorReport } from './operations/doctor/doctor-options.js';
import type { RunTimeline } from './operations/run-timeline.js';
import type { StreamChunk, StreamSummary } from '../model/stream.js';
import type { ReadStreamOptions } from './messages/stream-reader.js';
import type { WorkflowPause } from '../model/pause.js';
import type { PauseOptions, WorkflowPauseResult, WorkflowResumeResult } from './operations/pause-runs.js';
import type { StickyExecutionOptions } from './execution/sticky-executions.js';
import type { BulkOperationRecord } from '../model/bulk.js';
import type { BulkOptions, BulkResult, ResumeBulkOptions } from '../bulk/bulk-options.js';
import type { PushedWork } from './execution/pushed-work.js';

/** Options of `createEngine`. */
export interface EngineOptions {
  store: WorkflowStore;
  /**
   * Encodes every payload before the store sees it and decodes every one read back (inputs,
   * outputs, step outputs, event payloads, state values, error data, schedule inputs): the store
   * holds only the codec's envelopes. `aesGcmCodec` encrypts; see docs/encryption.md. A codec that
   * fails gives `CODEC_ERROR`. Default: none (payloads are stored as JSON).
   */
  codec?: PayloadCodec;
  /** Carries orchestrator and step jobs. Default: a new in-process local queue (owned and closed by the engine). */
  queue?: Queue;
  workflows: readonly AnyWorkflowDefinition[];
  /** Default `per-workflow`. `shared-groups` needs a queue with the `groups` capability. */
  queueStrategy?: QueueStrategy;
  /** How `startRun` starts runs by default: `queued` (any worker) or `inline` (this process, now). Default `queued`. */
  startMode?: 'inline' | 'queued';
  /** Prefix of every queue name (e.g. per environment). */
  queuePrefix?: string;
  /** Concurrency of each orchestrator and step worker this engine starts (default 10). */
  concurrency?: number;
  /** With `shared-groups`: per-group caps on each worker (default 5 per group). */
  groupConcurrency?: GroupConcurrency;
  /** Ceiling of the result polling interval (default 1 s); polling starts near 10 ms. */
  pollIntervalMs?: number;
  /** How often the recovery loop looks for due work (default 2 s). */
  recoveryIntervalMs?: number;
  /**
   * How long `stop()` waits for in-flight executions and step bodies before abandoning them
   * (default 30 s; `Infinity` waits for ever). See `Engine.stop`.
   */
  stopGraceMs?: number;
  /**
   * How long `start()` keeps trying while the store or the queue is unreachable (`STORE_ERROR` /
   * `QUEUE_ERROR`) before it rejects with that error (default 60 s; `Infinity` waits for ever).
   * Failures while it waits are logged once per cause, and the recovery once.
   */
  startTimeoutMs?: number;
  /** Largest input, output, event payload or state value (default 1 MiB, capped by the store's limit). */
  maxPayloadBytes?: number;
  /** Timing tunables; see `EngineTimings`. */
  timings?: Partial<EngineTimings>;
  /**
   * The retry policy of steps that set none: each of `retries`, `backoff`, `retryIf` a step leaves
   * out is taken from here (then from the built-in default: no retry, fixed 1 s). Checked at once:
   * bad values throw `INVALID_INPUT`.
   */
  defaultRetry?: RetryOptions;
  /**
   * How long ended runs are kept, per terminal status (`'30d'`, milliseconds): each recovery pass
   * deletes up to 100 runs that ended longer ago (oldest first), with everything they recorded,
   * freeing their idempotency keys. A status left out is kept for ever. See `Engine.prune`.
   */
  retention?: RetentionOptions;
  /** Injected time (tests use `ManualClock` from `@cairn/core/testing`). */
  clock?: Clock;
  /** Fault points for crash tests (see `@cairn/core/testing`). */
  faults?: FaultInjector;
  /** This process's worker id (default host:pid:random). */
  workerId?: string;
  /**
   * Where the engine logs (see `EngineLogger`): pino and Bunyan loggers fit as they are; wrap a
   * string-first one (console, winston) in `fromStringLogger`. Default: warnings and errors to the
   * console. A logger that is not an object with `warn` and `error` functions throws `INVALID_INPUT`.
   */
  logger?: EngineLogger;
  /**
   * Captures the trace context of the code calling `startRun` (a W3C carrier: `traceparent`,
   * `tracestate`), stored with the run so whichever process executes it continues that trace
   * (`@cairn/otel`'s `cairnTelemetry().traceContext` reads OpenTelemetry's active context).
   * Called only when `startRun` is given no `traceContext` of its own; may return undefined.
   */
  traceContext?: () => Record<string, string> | undefined;
  /**
   * Lets log entries carry inputs, outputs, event payloads and state values (default false: they
   * carry ids, names, attempts, timings and errors only, never what a workflow handles).
   */
  logPayloads?: boolean;
  /**
   * Schedules declared in code (`defineSchedule`): `start()` creates each one absent from the
   * store and brings a changed one up to date; the recovery loop fires due ticks. Each must start
   * a workflow of `workflows` and have a unique name, or `createEngine` throws `INVALID_INPUT`.
   */
  schedules?: readonly ScheduleDefinition[];
  /**
   * Keeps suspended executions in this process, so that a wake this process claims next resumes
   * one where it stopped instead of reading and replaying the run's whole history: a wake then
   * costs the same at step 10,000 as at step 10 (decision 64). Resumed only by the run's very next
   * claim; any other claim meanwhile (another worker, a lost lease) makes the run replay as
   * before. Default on, with the default bounds of `StickyExecutionOptions`; `false` replays on
   * every wake. A value of another shape throws `INVALID_INPUT`.
   */
  stickyExecutions?: false | StickyExecutionOptions;
}

/** Options of `Engine.startRun`. */
export interface StartOptions {
  /** Unique per workflow: a repeated key returns the existing run instead of starting another. */
  idempotencyKey?: string;
  /** Overrides the engine's `startMode`. */
  mode?: 'inline' | 'queued';
  /** Start on this registered version instead of the current one (`VERSION_RETIRED` when it is retired). */
  version?: string;
  /**
   * When the run must have ended: a `Date`, or a `Duration` from now (`'1h'`, milliseconds).
   * Overrides the workflow's default `deadline`. Past it the run fails with `DEADLINE_EXCEEDED`,
   * its children are cancelled and its running bodies' signals abort. See docs/semantics.md.
   */
  deadline?: DeadlineInput;
  /**
   * The trace context to store with the run (a W3C carrier: `traceparent`, `tracestate`; at most
   * 8 string entries). Default: what the engine's `traceContext` option captures, if set.
   */
  traceContext?: Record<string, string>;
  /**
   * An integer from -1000 to 1000 (default 0; `INVALID_INPUT` otherwise), stored with the run
   * (`RunRecord.priority`). Higher goes first: every job of the run (its start, wake-ups, queued
   * steps) is sent at this priority on a queue with the `priority` capability, and among runs
   * waiting for a concurrency or start-rate slot. Child runs and a `continueAsNew` successor take
   * their parent's. See docs/flow-control.md.
   */
  priority?: number;
  /**
   * Tags stored with the run (`RunRecord.tags`): string keys to string values within
   * `TAG_LIMITS` (`INVALID_INPUT` for another shape, `TAG_LIMIT` past a bound; nothing is written
   * then). `listRuns({ tags })` finds runs by them; `ctx.setTags` adds more. A `continueAsNew`
   * successor and a fork take the run's tags; a child run has its own. Needs a store that keeps
   * tags (`TAGS_UNSUPPORTED` otherwise). See docs/operating.md, Finding runs.
   */
  tags?: Record<string, string>;
  /**
   * At most one run of `key` has started and not ended at a time, across every engine on the
   * store. `mode: 'skip'`: when a run of the key has not ended, the start returns it
   * (`created: false`) and creates nothing. `mode: 'queue'`: the run is created and starts when
   * every run of the key started before it has ended (first come, first served). Overrides the
   * workflow's default `singleton`. Not with `idempotencyKey` (`INVALID_INPUT`: the singleton keeps
   * its line in the run's idempotency key). See docs/semantics.md, "Starting runs".
   */
  singleton?: { key: string; mode: 'skip' | 'queue' };
  /**
   * Starts with one `key` within `period` of each other make one run: the first creates it, due
   * `period` later; each later one returns its handle (`created: false`) and moves its start to
   * `period` after itself; the run starts then, with the last start's input. Overrides the
   * workflow's default. Not with `idempotencyKey`, `singleton` or `batch` (`INVALID_INPUT`). See
   * docs/semantics.md, "Starting runs".
   */
  debounce?: { key: string; period: Duration };
  /**
   * Starts with one `key` (default: one line per workflow) are collected into one run whose
   * handler receives the list of their inputs in arrival order; it starts when `maxSize` inputs
   * arrived or `maxWait` after the first, whichever comes first. Every start returns that run's
   * handle (`created` true for the first only). Overrides the workflow's default. Not with
   * `idempotencyKey`, `singleton` or `debounce` (`INVALID_INPUT`).
   */
  batch?: { key?: string; maxSize: number; maxWait: Duration };
}

/** Options of `Engine.cancel`. */
export interface CancelOptions {
  /**
   * Why: stored with the request (`RunRecord.cancelReason`; the first request's reason is kept),
   * carried by the CANCELLED error every body's `signal.reason` is and by the run's recorded error.
   * At most 1000 characters of well-formed text without NUL.
   */
  reason?: string;
}

/**
 * A started (or found) run. `O` is the output as it arrives: `startRun` gives a
 * `RunHandle<Jsonify<O>>` for a workflow whose output type is `O`.
 */
export interface RunHandle<O = unknown> {
  readonly id: string;
  /** False when an idempotency key matched an existing run. */
  readonly created: boolean;
  /** Waits for the run's output (its JSON round trip); see `Engine.result`. */
  result(options?: { timeout?: Duration }): Promise<O>;
}

/** One attempt in a run's history, with its step's name and kind. */
export interface HistoryEntry extends AttemptRecord {
  stepName: string;
  kind: StepKind;
}

/**
 * The engine: starts runs, executes them on workers, and answers questions about them. Every
 * method checks the runtime type of each argument first: a run id, name or key that is not a
 * well-formed identifier (`checkIdentifier`), an unknown option or a filter of the wrong type
 * rejects with `INVALID_INPUT` naming the argument, before the store is touched.
 */
export interface Engine {
  /** Registers versions, checks the queue strategy, and (unless `workers: false`) starts workers and recovery. */
  start(options?: { workers?: boolean }): Promise<void>;
  /**
   * Stops taking work (workers and recovery stop), then waits up to `graceMs` (default the
   * engine's `stopGraceMs`, 30 s) for in-flight executions — queued jobs and inline starts — to
   * finish, and closes the queue if the engine created it. Work still running after the grace
   * period is abandoned: step bodies' signals abort, the executions write nothing more, and each
   * run is handed back (status `waiting`, due now) so another worker resumes it at once; a queued
   * step body still running is left to its deadline, as after a crash. Resolves in every case.
   */
  stop(options?: { graceMs?: number }): Promise<void>;
  /**
   * Creates a run and starts it inline or on the queue. Bad input (unknown workflow, non-JSON or
   * oversized input, an input the workflow's `input` schema refuses: `INVALID_INPUT` with the
   * schema's issues in `data.issues`) throws a typed error before anything is written; the run
   * stores the schema's value. `input` is what the definition takes (by name: any type JSON
   * carries; a compile error otherwise), and the handle's `result()` gives the output's JSON round
   * trip (`Jsonify<O>`). The run goes on the version
   * listed last in `workflows` that is not retired (`engine.versions.setStatus`); `VERSION_RETIRED`
   * (nothing written) when every version is, or `options.version` is — except that a repeated
   * `idempotencyKey` still returns the run that holds it.
   */
  startRun<I, O>(workflow: WorkflowOf<I, O> | (string & JsonGate<I, 'workflow input'>), input: I, options?: StartOptions): Promise<RunHandle<Jsonify<O>>>;
  /**
   * Resolves with the output of a completed run; throws `RUN_FAILED` / `RUN_CANCELLED` (cause: the
   * run's error), `RUN_NOT_FOUND`, or `RESULT_TIMEOUT`. While this process executes the run it
   * makes no store read and resolves at once when the run ends here; otherwise (the run is
   * suspended, or executes elsewhere) it polls the store from ~10 ms up to `pollIntervalMs`.
   */
  result<O = unknown>(runId: string, options?: { timeout?: Duration }): Promise<O>;
  /**
   * Sends a message to a run and wakes it. Every send of a name is kept, in arrival order: the k-th
   * `ctx.waitForEvent` of that name in the run receives the k-th message, whether it was sent before
   * or after the wait. `event` is a name or a `defineEvent` definition (whose schema, if any, checks
   * the payload here, before anything is stored: a refusal is `INVALID_INPUT`, a Standard Schema's
   * issues in `data.issues`; the payload type is what the schema takes, and by name any type JSON
   * carries). Names follow the rule of waits (`checkEventName`);
   * a bad name, options or payload throws `INVALID_INPUT` (or `NOT_SERIALIZABLE` /
   * `PAYLOAD_TOO_LARGE`) with nothing stored. Answers `{ delivered: true, duplicate: false, seq }`
   * when stored as message `seq`; `{ delivered: false, duplicate: true, seq }` when a send with the
   * same `idempotencyKey` was stored before (nothing is stored again); `{ delivered: false,
   * duplicate: false }` when the run has ended. `RUN_NOT_FOUND` when the run does not exist.
   */
  sendEvent<T = Json, In = T>(
    runId: string,
    event: EventDefinition<T, In> | (string & JsonGate<In, 'event payload'>),
    payload?: In,
    options?: SendEventOptions,
  ): Promise<EventDelivery>;
  /**
   * Sends a request to a run and resolves with the workflow's reply (docs/semantics.md, Requests):
   * the workflow takes it with `ctx.receiveRequest(name)` and answers with `reply(value)` (this
   * resolves with `value`'s JSON round trip) or `reject(error)` (this throws `REQUEST_REJECTED`,
   * `cause` the workflow's error). `request` is a name or a `defineRequest` definition, whose schema
   * checks the payload here (`INVALID_INPUT`). Before anything is stored: a bad name, options or
   * payload throws `INVALID_INPUT` (or `NOT_SERIALIZABLE` / `PAYLOAD_TOO_LARGE`); an unknown run
   * `RUN_NOT_FOUND` and an ended one `REQUEST_RUN_ENDED`, nothing written. Then: `REQUEST_TIMEOUT`
   * after `options.timeout` (default 60 s; `data.received` says whether the workflow took it: if not,
   * the request was withdrawn and no workflow code ever sees it), `REQUEST_RUN_ENDED` when the run
   * ends without replying. The caller may be in another process than the run's worker: it learns of
   * the reply from the store's signals where it has them, else by reading every 100 ms.
   * `REQUEST_UNSUPPORTED` on a store without streams.
   */
  request<R = Json, T = Json, In = T>(
    runId: string,
    request: RequestDefinition<T, R, In> | (string & JsonGate<In, 'request payload'>),
    payload?: In,
    options?: RequestOptions,
  ): Promise<Jsonify<R>>;
  /**
   * The latest value the run exposed under `name` (`ctx.expose`), read from the store without
   * waking the run (docs/semantics.md, Queries): `{ value, index, exposedAt }`, or `undefined` when
   * the run never exposed that name. Exact: the value of the run's latest recorded expose, which a
   * replay never writes again, so answers only move forward. `RUN_NOT_FOUND` for an unknown run,
   * `INVALID_INPUT` for bad arguments, `STREAM_UNSUPPORTED` on a store without streams. Reads only.
   */
  query<T = Json>(runId: string, name: string): Promise<QueryAnswer<T> | undefined>;
  /**
   * Requests cancellation. Observed at once by an execution in this process; without a distributed
   * queue, on a store with signals, at once (one signal and one store read) by an engine of another
   * process executing the run; else within a third of the lease (`timings.leaseMs / 3`, plus one
   * store call) by the worker executing the run or running one of its queued step bodies: every running body's signal aborts with CANCELLED
   * (carrying `reason`), every later primitive throws it, and the run ends `cancelled`; its
   * children are cancelled with the same reason. No-op on a finished run; `RUN_NOT_FOUND` when
   * the run does not exist.
   */
  cancel(runId: string, options?: CancelOptions): Promise<void>;
  /**
   * The chunks of the run's stream `name` (written by `ctx.emit`), each with its index, from
   * `options.from` (default 0), then live ones as they are written, until the stream is closed
   * (`ctx.closeStream`) or the run ends; each chunk is yielded once, in index order. A reader in
   * another process learns of new chunks from the store's signals where it has them, else by
   * reading every `pollInterval` (docs/semantics.md, Streams). Bad arguments throw `INVALID_INPUT`
   * at the call; the first `next()` rejects with `RUN_NOT_FOUND`, `STREAM_RANGE` (`from` past the
   * stream's end) or `STREAM_NOT_FOUND` (the run ended without writing that stream);
   * `STREAM_UNSUPPORTED` when the store has no streams. Nothing is written; leaving the loop
   * (or aborting `options.signal`) frees everything the reader held.
   */
  readStream(runId: string, name: string, options?: ReadStreamOptions): AsyncIterable<StreamChunk>;
  /** The run's streams with their lengths and whether each is closed (`[]` for a run without any). `RUN_NOT_FOUND` when there is no such run. */
  listStreams(runId: string): Promise<StreamSummary[]>;
  /**
   * Pauses the run (see docs/semantics.md, "Pause and resume"): from the moment this resolves no
   * worker claims it, and an execution holding it lets its running step bodies finish and be
   * recorded, then stops before its next primitive and gives the lease back (observed at once in
   * this process; elsewhere by a store signal, else within a third of the lease). Timers that fall
   * due and messages that arrive meanwhile wait for `resume`. Pausing is not cancelling: the
   * deadline keeps counting. Idempotent: a paused run keeps its first pause (`changed: false`,
   * nothing written). `RUN_NOT_FOUND` when the run does not exist, `RUN_CONFLICT` when it ended,
   * `INVALID_INPUT` for a bad id or reason, `PAUSE_UNSUPPORTED` on a store without `pauses`;
   * nothing is written then.
   */
  pause(runId: string, options?: PauseOptions): Promise<PauseChange>;
  /**
   * Lifts the run's pause, whoever set it, and makes it due at once: it continues exactly where it
   * stopped. A run that is not paused is left as it is (`changed: false`, nothing written). Errors
   * as `pause`.
   */
  resume(runId: string): Promise<PauseChange>;
  /**
   * Pauses every run of `workflow` that has not ended, and every run of it started while it stays
   * paused (starts are accepted and wait): records the workflow as paused, then pauses its runs one
   * by one (scope `workflow`; a run paused already keeps its pause). A run created while this call
   * is under way is paused at its first claim. Idempotent (`changed: false` when it was paused).
   */
  pauseWorkflow(workflow: string, options?: PauseOptions): Promise<WorkflowPauseResult>;
  /**
   * Lifts the workflow's pause: removes its record, then resumes its runs paused by it (scope
   * `workflow`); runs paused on their own with `pause` stay paused.
   */
  resumeWorkflow(workflow: string): Promise<WorkflowResumeResult>;
  /** The workflow's pause, or `undefined` when it is not paused. */
  getWorkflowPause(workflow: string): Promise<WorkflowPause | undefined>;
  /** Every paused workflow, by name (at most 1000). */
  listWorkflowPauses(): Promise<WorkflowPause[]>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * Runs newest first, one page at a time, as summaries without payloads (`getRun` gives a whole
   * record). Filters: `workflow`, `status` (one or many), `createdAfter` / `createdBefore`,
   * `parentRunId`, `idempotencyKey` (with `workflow`), `tags` (every one of them, exactly; a store
   * without tags refuses it with `TAGS_UNSUPPORTED`); each is served by an index.
   */
  listRuns(query?: RunQuery): Promise<RunPage>;
  /** The run of `workflow` started with `idempotencyKey`, or `undefined` (through the idempotency index). */
  findRun(workflow: string, idempotencyKey: string): Promise<RunRecord | undefined>;
  /**
   * Resumes a `failed` or `cancelled` run from where it ended, keeping its succeeded steps: the run
   * becomes `pending` again (fence incremented, so a writer of the old execution is fenced off),
   * its unfinished steps and the failures it did not go past are forgotten and run again, the
   * failed or cancelled children those steps wait for are retried with it, and a deadline already
   * passed is removed. Recorded in `RunRecord.retries`. The run is dispatched and left due, so any
   * worker's recovery picks it up. `RUN_CONFLICT` when the run is not failed or cancelled (or its
   * saga ran compensations); `RUN_NOT_FOUND` when it does not exist. See docs/operating.md.
   */
  retryRun(runId: string, options?: RetryRunOptions): Promise<RunRecord>;
  /**
   * Starts a NEW run of the run's workflow (current version) that reuses the source's recorded
   * outcomes of the steps before `fromStep` (by the recorded order) and runs `fromStep` and every
   * later step with the current code. The fork records `forkedFrom`. `STEP_NOT_FOUND` (nothing
   * written) when the source has no such step key; `RUN_NOT_FOUND` when the source is missing;
   * `VERSION_RETIRED` (nothing written) when every version of the workflow is retired.
   */
  forkRun(runId: string, options: ForkOptions): Promise<RunHandle>;
  /**
   * Deletes ended runs (never an active one) that ended before `before` (default: now minus the
   * status's `retention`), of `statuses` (default: those with a retention), at most `limit`. A
   * child whose parent is still active is kept. Frees the deleted runs' idempotency keys.
   */
  prune(options?: PruneOptions): Promise<{ deleted: number }>;
  /** The run's steps, in order. */
  steps(runId: string): Promise<StepRecord[]>;
  /** The run's state (every key set with `ctx.setState`). */
  state(runId: string): Promise<Record<string, Json>>;
  /** Every attempt of every step, oldest first. */
  history(runId: string): Promise<HistoryEntry[]>;
  /**
   * The run's timeline as plain JSON (see `RunTimeline`): the run, every step with its attempts and
   * waits, the children it started, its state. Four store reads (run, steps, attempts, state), in
   * parallel, whatever the number of steps. `RUN_NOT_FOUND` when the run does not exist.
   */
  timeline(runId: string): Promise<RunTimeline>;
  /**
   * Deletes a finished run and everything it recorded; `force` also deletes an active run. Deleting
   * an active child run wakes its parent, which takes the child as ended (`CHILD_FAILED`, status
   * `deleted`).
   */
  deleteRun(runId: string, options?: { force?: boolean }): Promise<boolean>;
  /**
   * Acts on every run `filter` matches (docs/operating.md, "Bulk operations"): `cancel`, `retry`,
   * `pause`, `resume` or `delete`, each run through the engine's own operation and its checks, so
   * a run that changed state since it was listed is `skipped`, not failed (a cancel of a run that
   * completed meanwhile). Runs outside the filter are never touched. Pages through the runs
   * (newest first) and stores the operation (`BulkOperationRecord`: filter, action, cursor,
   * counts) after each page, so an operation whose process died is taken up where it stopped by
   * `resumeBulk`. Runs created after the operation began are not acted on. With `dryRun` it counts
   * the matched runs (and those the action applies to now) and writes nothing. `INVALID_INPUT`
   * for bad options and `BULK_UNSUPPORTED` on a store without `bulk` (a dry run works on every
   * store); nothing is written then.
   */
  bulk(options: BulkOptions): Promise<BulkResult>;
  /**
   * Takes up a bulk operation whose process stopped (its owner's lease, `timings.leaseMs`, ran
   * out) from the last page it stored; the page under way when it stopped is acted on again
   * (its done runs are skipped then). A completed operation is returned as it is.
   * `BULK_NOT_FOUND`, `BULK_BUSY` (another live process works on it), `BULK_UNSUPPORTED`.
   */
  resumeBulk(id: string, options?: ResumeBulkOptions): Promise<BulkResult>;
  /** A bulk operation's record (its filter, action, progress), or `undefined`. `BULK_UNSUPPORTED` without `bulk`. */
  getBulk(id: string): Promise<BulkOperationRecord | undefined>;
  /** Bulk operations newest first, at most `limit` (default 50), those before the id `before`. */
  listBulk(options?: { limit?: number; before?: string }): Promise<BulkOperationRecord[]>;
  /** One pass of the recovery loop: dispatches every run whose timer is due or whose lease expired. Returns how many. */
  recover(): Promise<number>;
  /**
   * Looks for what is stuck or inconsistent in the store — runs whose lease expired and nobody
   * took over, runs due and never dispatched, queued steps no worker started, parents not woken
   * by their ended child, orphaned children, runs pinned to versions no engine registered, waits
   * nothing can end, and the backend's own drift (`WorkflowStore.doctor`) — and says what each
   * means. Bounded: every read is indexed and capped by `limits` (a capped read is named in
   * `truncated`). Read-only unless `fix: true`, which repairs only what is safe (dispatch a stuck
   * run or step, wake a parent, drop dangling index entries) and marks each repaired finding
   * `fixed`. Bad options reject with `INVALID_INPUT`. Works without `start()` (no workers needed).
   * A repair that dispatches goes through this engine's queue, so it is made only when a worker can
   * get the job: the queue was passed in (shared with workers) or this engine runs workers;
   * otherwise the finding stays unfixed and its `action` says why. See docs/operating.md.
   */
  doctor(options?: DoctorOptions): Promise<DoctorReport>;
  /** Schedules: create, list, pause, resume, trigger and delete them at run time (see `EngineSchedules`). */
  readonly schedules: EngineSchedules;
  /** Registered workflow versions: list them, and retire or reactivate one (see `EngineVersions`). */
  readonly versions: EngineVersions;
  /**
   * Work pushed to this process by a request (a serverless function, `@cairn/http`): execute one
   * run within a deadline, one queued step, or list the due runs. Works without `start()`.
   */
  readonly pushed: PushedWork;
  /** This process's worker id. */
  readonly workerId: string;
  /**
   * How many executions in this process have workflow code running a turn or about to (a macrotask
   * away). A test that drives time itself (a `ManualClock`) should not move the clock while this is
   * above 0: the engine is busy, not waiting for time.
   */
  readonly turnsInProgress: number;
  /**
   * Suspended executions this process keeps for their runs' next wake (`stickyExecutions`), and
   * the calls they hold together: never above the option's `maxExecutions` and `maxCalls`. Both 0
   * when the option is `false`.
   */
  readonly keptExecutions: { readonly executions: number; readonly calls: number };
}
