import type { DeliverOptions, EventDelivery, EventRecord } from '../model/event.js';
import type { Json } from '../model/json.js';
import type {
  DeleteCondition,
  DueRun,
  PauseChange,
  EndedRunPage,
  EndedRunQuery,
  NewRun,
  RunPage,
  RunQuery,
  RunRecord,
  RunReopen,
  RunTransition,
  TagWrite,
} from '../model/run.js';
import type { AttemptRecord, NewStep, StepRecord, StepTransition } from '../model/step.js';
import type { ScheduleRecord } from '../model/schedule.js';
import type { NewStreamEntry, StreamEntry, StreamSummary } from '../model/stream.js';
import type { SlotGrant, SlotRequest, SlotSnapshot } from '../model/slot.js';
import type { VersionRecord, VersionStatus } from '../model/version.js';
import type { PauseScope, WorkflowPause } from '../model/pause.js';
import type { BulkOperationRecord } from '../model/bulk.js';
import type { StoreDoctorOptions, StoreDoctorResult } from './store-doctor.js';

/**
 * The fencing token a write carries: the run's `fence` from the claim that produced it, or
 * `null` for writes made without the run's lease (a queued step worker, whose steps are protected
 * by their own compare-and-set on status and attempt).
 */
export type Fence = number | null;

/** Runs: creation, listing, leases and status transitions. */
export interface RunStore {
  /**
   * Creates a run in status `pending` with `fence` 0. Atomic: when a run of the same workflow
   * already has `idempotencyKey`, nothing is written and that run is returned with
   * `created: false`; of N concurrent creates with one key exactly one reports `created: true`.
   */
  create(run: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }>;

  /** Reads one run; `undefined` when it does not exist. */
  get(runId: string): Promise<RunRecord | undefined>;

  /**
   * Lists runs newest first (`createdAt` desc, `id` desc) with an opaque cursor, as SUMMARIES
   * (`RunSummary`: no input, output or retry records; the error reduced to name, code and
   * message), reading no payload where the backend can avoid it. Filters: workflow, status (one or
   * many), created time range, `parentRunId`, and `idempotencyKey` (always with `workflow`). Each
   * is served by an index (status + time, workflow + time, parent + time, the idempotency index).
   */
  list(query: RunQuery): Promise<RunPage>;

  /**
   * The run of `workflow` holding `idempotencyKey`, through the idempotency index the store keeps
   * for `create`; `undefined` when none (a deleted run's key is free again).
   */
  findByIdempotencyKey(workflow: string, idempotencyKey: string): Promise<RunRecord | undefined>;

  /**
   * Reopens a `failed` or `cancelled` run for `engine.retryRun`: the ONE write that may change a
   * terminal run. Atomically, and only when the run is failed or cancelled and its fence is still
   * `reopen.fence`: deletes the step records named in `reopen.forget` with their attempt records,
   * and makes the run `pending`, due now (`wakeAt = now`), `fence + 1` (so any writer of the old
   * execution gets `LEASE_LOST`), with no lease, output, error, `cancelRequested` or
   * `cancelReason`, `reopen.retry` appended to `retries`, and the deadline as `reopen.deadline`
   * says. Everything else (other steps, attempts, state, events, idempotency key) is kept. Throws
   * `RUN_NOT_FOUND` when the run does not exist and `RUN_CONFLICT` when it is not failed or
   * cancelled or its fence moved; nothing is written then. Returns the reopened run.
   */
  reopen(runId: string, reopen: RunReopen, now: number): Promise<RunRecord>;

  /**
   * Runs of one terminal status last changed (`updatedAt`) strictly before `updatedBefore`, at
   * most `limit` a batch, continuing from `query.cursor`; `nextCursor` is present when more may
   * follow. Oldest first where the backend indexes `updatedAt` (SQL, MongoDB, memory: by
   * (status, updatedAt, id)); Redis reads its status index (by `createdAt`, which is never later
   * than `updatedAt`) and filters. Retention reads small batches of it.
   */
  listEnded(query: EndedRunQuery): Promise<EndedRunPage>;

  /**
   * Takes the lease atomically (one compare-and-set): succeeds when the run is not terminal, not
   * paused (`RunRecord.paused` absent: a store without `pauses` never has one) and has no lease, an expired lease (`expiresAt <= now`), or a lease held by `owner`. On success the
   * run becomes `running`, `fence` is incremented, `lease = { owner, expiresAt: now + leaseMs }`
   * and `wakeAt` is cleared when it is due (`wakeAt <= now`: the claimer sees that news when it
   * replays) or the run was `pending` (its start grace); a `wakeAt` later than `now` on a `waiting`
   * or `running` run is kept (a wake-up promised for later, such as a child's pre-wake of its
   * parent: `transition` to `waiting` then keeps the earlier of it and its own), lowered to an
   * outstanding promise (`promiseWake`) later than `now` if that is earlier; a promise no later
   * than `now` is forgotten with its count (its time came: it did its work). Returns the
   * updated run, whose `fence` is the token for every later write. Returns `undefined` (writing
   * nothing) when the run is missing, terminal, paused, or leased by someone else. Of N concurrent
   * claimers exactly one succeeds; of a claim racing `pauses.pauseRun`, either the claim lands first
   * (it returns a run without `paused`) or it returns `undefined`.
   */
  claim(runId: string, owner: string, leaseMs: number, now: number): Promise<RunRecord | undefined>;

  /**
   * Extends the lease to `now + leaseMs`. Throws `LEASE_LOST` (writing nothing) when `fence` is not
   * the run's current fence or the run is terminal. Returns the run, so the holder learns of
   * `cancelRequested`.
   */
  renew(runId: string, fence: number, leaseMs: number, now: number): Promise<RunRecord>;

  /**
   * Compare-and-set of the status. Throws `LEASE_LOST` when `fence` is stale, and
   * `RUN_CONFLICT` when the current status is not in `from` or is terminal; either way nothing is
   * written. Any status but `running` releases the lease. `waiting` sets `wakeAt` to the earlier of
   * `transition.wakeAt` and the run's own `wakeAt` (a wake-up requested since the claim, or a later
   * one the claim kept); terminal statuses clear `wakeAt`
   * and record `output` / `error`. Returns the updated run.
   */
  transition(runId: string, fence: number, transition: RunTransition, now: number): Promise<RunRecord>;

  /**
   * Asks a non-terminal run for attention: `wakeAt` becomes `min(wakeAt, now)`. Unfenced; a
   * no-op on missing or terminal runs. Used when an event, a child result or a queued step
   * result arrives.
   */
  wake(runId: string, now: number): Promise<void>;

  /**
   * Optional, with `keepPromise` (a store without them makes the engine pre-wake a parent with
   * `wake(runId, at)`, which a claim landing before the child's ending write can consume). Promises
   * the run attention no later than `at`: `wakeAt` becomes `min(wakeAt, at)` as `wake` does, and
   * the promise is also kept apart from it — the earliest outstanding promise's time and a count
   * of outstanding promises (this adds one) — until `keepPromise` settles the last one. While one
   * is outstanding and later than a claim, that claim leaves `wakeAt` no later than it. The engine
   * promises a parent its child's end right before the child's ending write and keeps the promise
   * right after it: a parent claimed in between (woken by something else) that read its child still
   * running then suspends no later than the promise (decisions 56 and 78). Unfenced; `updatedAt`
   * becomes `now`; a no-op on missing or terminal runs.
   */
  promiseWake?(runId: string, at: number, now: number): Promise<void>;

  /**
   * Optional, with `promiseWake`. Wakes the run as `wake(runId, now)` and settles one outstanding
   * promise: the count goes down by one (never below zero), and at zero the promise is forgotten
   * (so a claim after it leaves no `wakeAt` for it). Unfenced; a no-op on missing or terminal runs.
   */
  keepPromise?(runId: string, now: number): Promise<void>;

  /**
   * Sets `cancelRequested` and wakes the run (as `wake`) in one atomic write when the run is not
   * terminal. `reason` is stored as `cancelReason` only by the request that first sets
   * `cancelRequested` (the first reason wins; a later request, with or without one, keeps it).
   * Returns the run after the write, or `undefined` when it does not exist.
   */
  requestCancel(runId: string, now: number, reason?: string): Promise<RunRecord | undefined>;

  /**
   * Runs that need dispatching, earliest first, at most `limit`: `pending` or `waiting` runs whose
   * `wakeAt <= now`, and `running` runs whose lease expired (`lease.expiresAt <= now`). Served by
   * an index, never a scan of all runs. A paused run (`RunRecord.paused`) is never due.
   */
  findDue(now: number, limit: number): Promise<DueRun[]>;

  /**
   * Deletes the run and every artefact of it (steps, attempts, state, events, its idempotency key
   * and index entries) atomically or in an order that leaves no orphan visible to `get`/`list`.
   * With `condition`, only when the run's status is one of `condition.statuses` and its
   * `updatedAt` is strictly before `condition.updatedBefore`, checked in the same atomic unit (so
   * a run reopened by a retry meanwhile is kept). Returns false when nothing was deleted.
   */
  delete(runId: string, condition?: DeleteCondition): Promise<boolean>;

  /**
   * Optional (retention's batched path; a store without it is pruned one `delete` at a time, as
   * before). Deletes every run of `runIds` (at most 1000) whose status is one of
   * `condition.statuses` and whose `updatedAt` is strictly before `condition.updatedBefore`, with
   * every artefact of it, exactly as `delete` with that condition does — the condition checked in
   * the same atomic unit as the deletion — but in ONE atomic unit for the whole batch (one commit
   * on a SQL server, where `delete` takes one per run). Runs that are missing or fail the condition
   * are left as they are. Returns the ids it deleted, in no particular order.
   */
  deleteMany?(runIds: readonly string[], condition: DeleteCondition): Promise<string[]>;

  /**
   * Optional: the tag capability (`RunRecord.tags`). A store with this method also stores
   * `NewRun.tags` at `create`, serves `RunQuery.tags` from an index (never a scan of all runs), and
   * removes a run's index entries with it (`delete`, `deleteMany`); the engine refuses tags with
   * `TAGS_UNSUPPORTED` on a store without it.
   *
   * Applies the run's tag write number `write.seq` (`ctx.setTags`), positionally: when
   * `write.seq` equals the run's `tagWrites` (absent: 0), sets each of `write.tags` on the run
   * (adding it, or replacing that key's value), moves the index entries with it and makes
   * `tagWrites` one more, in one atomic write, and returns `{ applied: true }`; when `write.seq`
   * is lower (the place is taken: a replay's call), writes nothing and returns
   * `{ applied: false }`. Throws as every fenced write does (`RUN_NOT_FOUND`, `LEASE_LOST` for a
   * stale fence, `RUN_CONFLICT` for a terminal run), and `RUN_CONFLICT` when `write.seq` is
   * higher than `tagWrites` (a write before it is missing); nothing is written then. `updatedAt` is left as it is. The caller keeps the run within
   * `TAG_LIMITS`.
   */
  setTags?(runId: string, fence: number, write: TagWrite, now: number): Promise<{ applied: boolean }>;
}

/** Steps and their attempt records. */
export interface StepStore {
  /** Every step of a run, ordered by `seq`, in ONE read: replay never reads step by step. */
  load(runId: string): Promise<StepRecord[]>;

  /**
   * Records a step in its first live status. Idempotent on (run, key): if the key exists nothing is
   * written and the existing step is returned with `created: false`. A `running` step opens attempt
   * 1 in the same atomic write. Throws `LEASE_LOST` when `fence` is not the run's fence (nothing is
   * written), and `RUN_CONFLICT` when the run is terminal.
   *
   * On stores with `capabilities.insertFinished`: a step given `finishedAttempt` (status
   * `succeeded`, `failed` or `retry_wait`) is recorded with that finished attempt 1 in the same
   * atomic write (no reader sees one without the other), and a numeric `fence` is stamped on the new
   * step as `StepRecord.fence`.
   */
  insert(runId: string, fence: Fence, step: NewStep, now: number): Promise<{ step: StepRecord; created: boolean }>;

  /**
   * Compare-and-set on the step's status and attempt, writing the step and its attempt records
   * (`endAttempt`, `startAttempt`) as ONE atomic unit: no reader ever sees one without the other.
   * Throws `STEP_CONFLICT` when the step is missing or does not match `from`, `LEASE_LOST` when a
   * numeric `fence` is stale, `RUN_CONFLICT` when the run is terminal; nothing is written then.
   * Returns the updated step.
   */
  transition(runId: string, fence: Fence, transition: StepTransition, now: number): Promise<StepRecord>;
}

/** Per-run key/value state. */
export interface StateStore {
  /**
   * Sets one key atomically (an upsert of that key alone, never a read-modify-write of the whole
   * state): concurrent writers of different keys never lose each other's values. Fenced like every
   * write of an executing run; refused with `RUN_CONFLICT` on a terminal run.
   */
  set(runId: string, fence: Fence, key: string, value: Json, now: number): Promise<void>;

  /** The whole state of a run (`{}` when none). Keys come back byte-for-byte as written. */
  get(runId: string): Promise<Record<string, Json>>;
}

/**
 * Messages sent to runs. Every send of a name is kept, numbered per (run, name) from 1 in the order
 * the store accepted it (`EventRecord.seq`); the engine hands the k-th message of a name to the k-th
 * wait for it.
 */
export interface EventStore {
  /**
   * Appends the message as the next `seq` of (run, name) and, in the same atomic unit, wakes the run
   * (as `RunStore.wake`). Of N concurrent sends to one (run, name) each gets its own `seq`, with no
   * gap and no repeat. With `options.idempotencyKey`: when a message of that run already carries
   * the key (whatever its name), nothing is written and `{ delivered: false, duplicate: true, seq }`
   * names that message; of N concurrent sends with one key exactly one is stored. A repeat is
   * reported as a duplicate even after the run ended. Otherwise, when the run is terminal, nothing
   * is written and `{ delivered: false, duplicate: false }` is returned. Throws `RUN_NOT_FOUND`
   * when the run does not exist.
   */
  deliver(runId: string, name: string, payload: Json, now: number, options?: DeliverOptions): Promise<EventDelivery>;

  /**
   * Message `seq` (1-based: 1 is the first message of that name) of the run, or `undefined` when
   * fewer than `seq` messages of that name were sent to it.
   */
  get(runId: string, name: string, seq: number): Promise<EventRecord | undefined>;
}

/**
 * Named streams of a run (`ctx.emit`, `engine.readStream`; docs/semantics.md "Streams"). A stream
 * is an append-only list of chunks numbered from 0 without gaps, optionally ended by one end
 * marker. Entries are positional: the engine names the index of each write (the k-th `ctx.emit`
 * of a stream in the workflow's call order is chunk k), so a replay that writes an entry again
 * writes nothing. Deleted with their run (`RunStore.delete`).
 */
export interface StreamStore {
  /**
   * Writes `entry` at `entry.index` of the run's stream `entry.stream`, as one atomic unit:
   * - an entry already stored at that index (a chunk, or the marker when `close`) is kept as it is
   *   and `{ created: false }` returned: nothing is written (a replay writing again);
   * - a chunk at `index` = the stream's length, on a stream without end marker, is stored;
   * - the end marker at `index` = the length is stored (the stream is closed from then on);
   * - otherwise nothing is written: a chunk or marker past the length (a gap), or a new chunk on a
   *   closed stream, throws `STREAM_CONFLICT`.
   * Fenced like every write of an executing run: `LEASE_LOST` when a numeric `fence` is stale,
   * `RUN_CONFLICT` when the run is terminal, `RUN_NOT_FOUND` when it does not exist.
   */
  append(runId: string, fence: Fence, entry: NewStreamEntry, now: number): Promise<{ created: boolean }>;

  /**
   * Entries of the run's stream `stream` with `index >= from`, in index order, at most `limit`
   * (1 to 1000), the end marker included when reached. `[]` when there are none (or no such run).
   */
  read(runId: string, stream: string, from: number, limit: number): Promise<StreamEntry[]>;

  /** Every stream of the run with its length and whether it is closed, ordered by name as the backend compares names. */
  list(runId: string): Promise<StreamSummary[]>;
}

/** Registered workflow versions. */
export interface VersionStore {
  /**
   * Registers (workflow, version): inserts it `active`, or updates `descriptor` and `updatedAt`
   * of an existing one (keeping its status and `createdAt`). Idempotent and safe to race.
   */
  upsert(workflow: string, version: string, descriptor: Json, now: number): Promise<VersionRecord>;

  /** One version, or `undefined`. */
  get(workflow: string, version: string): Promise<VersionRecord | undefined>;

  /** Every version of a workflow, oldest `createdAt` first. */
  list(workflow: string): Promise<VersionRecord[]>;

  /** Sets the status; throws `VERSION_NOT_FOUND` when it is not registered. */
  setStatus(workflow: string, version: string, status: VersionStatus, now: number): Promise<VersionRecord>;
}

/**
 * Schedules (see docs/schedules.md). A schedule is one record keyed by its name; every change after
 * `create` is a compare-and-set on `revision`, so of two engines handling one tick only one write
 * lands, and the loser re-reads.
 */
export interface ScheduleStore {
  /**
   * Inserts `schedule` with `revision` 1 when no schedule has its name; otherwise writes nothing
   * and returns the stored one with `created: false`. Of N concurrent creates of one name exactly
   * one reports `created: true`.
   */
  create(schedule: ScheduleRecord): Promise<{ schedule: ScheduleRecord; created: boolean }>;

  /** One schedule, or `undefined`. Names come back byte-for-byte as written. */
  get(name: string): Promise<ScheduleRecord | undefined>;

  /**
   * Schedules ordered by name as the backend compares names, at most `limit` (1 to 1000), only
   * those after `after` in that order when given (so a caller pages by the last name it got).
   */
  list(options: { limit: number; after?: string }): Promise<ScheduleRecord[]>;

  /**
   * Compare-and-set: when the stored schedule named `schedule.name` has `revision` equal to
   * `expectedRevision`, replaces it with `schedule` at `revision` = `expectedRevision + 1` and
   * returns what was written; otherwise (changed meanwhile, or deleted) writes nothing and returns
   * `undefined`. Of N concurrent updates from one revision exactly one lands.
   */
  update(schedule: ScheduleRecord, expectedRevision: number): Promise<ScheduleRecord | undefined>;

  /** Deletes the schedule (never its runs); false when it did not exist. */
  delete(name: string): Promise<boolean>;

  /**
   * Schedules whose `dueAt` is set and `<= now`, earliest `dueAt` first, at most `limit`. Served by
   * an index on `dueAt`, never a scan of all schedules.
   */
  findDue(now: number, limit: number): Promise<ScheduleRecord[]>;
}

/**
 * Slots for concurrency and rate limits (see `model/slot.ts` and docs/flow-control.md). Every
 * method is one atomic unit per key: at every instant at most `limit` holders of a key hold a slot
 * whose `expiresAt > now`, however many engines in however many processes call at once.
 */
export interface SlotStore {
  /**
   * Takes a slot of `request.key` for `request.holder`.
   * - The holder already holds one (expired or not, not taken over): its `expiresAt` becomes the
   *   later of the stored and requested times, it leaves the waiters, and the request is granted.
   * - Otherwise, with `free` = `limit` minus the slots held with `expiresAt > now`: without `wait`
   *   it is granted when `free > 0`; with `wait` when `free` is greater than the number of
   *   unexpired waiters ordered before it. A grant removes the holder from the waiters.
   * - Refused with `wait`: the holder is recorded as a waiter (or its entry refreshed with the new
   *   `wait`). `freeAt` is the earliest `expiresAt` of the held slots when all are held.
   * Of N concurrent requests for the last free slot exactly one is granted.
   */
  acquire(request: SlotRequest, now: number): Promise<SlotGrant>;

  /**
   * Extends the holder's slot of `key` to `expiresAt` (never shortening it). True when the holder
   * still has its slot (even expired, when nobody took it meanwhile); false when it has none (the
   * slot was taken over after it expired, or was released): the holder must stop as if its lease
   * were lost.
   */
  renew(key: string, holder: string, expiresAt: number, now: number): Promise<boolean>;

  /**
   * Frees the holder's slot of `key` and removes its waiter entry (either may be absent: a no-op
   * then). Returns the first unexpired waiter left in line (the holder to wake so it asks again),
   * or `undefined` when none waits.
   */
  release(key: string, holder: string, now: number): Promise<string | undefined>;

  /** The holders of unexpired slots and the unexpired waiters of `key`, waiters in line order. */
  inspect(key: string, now: number): Promise<SlotSnapshot>;
}

/**
 * Pause and resume (see docs/semantics.md, "Pause and resume"). A pause is a mark on the run
 * (`RunRecord.paused`) that `runs.claim` and `runs.findDue` honour; it changes nothing else, so an
 * execution holding the lease records what it is doing and suspends, and a run's timers and events
 * keep arriving (its `wakeAt` moves as always) to be acted on after `resumeRun`. A paused workflow
 * is a record per workflow name the engine reads when it first claims a run; the engine pauses the
 * workflow's runs one by one. Optional: a store without it has no paused runs, and the engine
 * refuses `pause` with `PAUSE_UNSUPPORTED`.
 */
export interface PauseStore {
  /**
   * Marks the run paused (`RunRecord.paused = { at: now, scope, reason }`) in one atomic write that
   * changes nothing else (not `updatedAt`, status, lease, fence or `wakeAt`). A run paused already
   * is left as it is (`changed: false`: the first pause, its scope and reason are kept, nothing is
   * written). Throws `RUN_NOT_FOUND` when the run does not exist and `RUN_CONFLICT` when it is
   * terminal; nothing is written then.
   */
  pauseRun(runId: string, pause: { scope: PauseScope; reason?: string }, now: number): Promise<PauseChange>;

  /**
   * Removes the pause and wakes the run (as `runs.wake`: `wakeAt = min(wakeAt, now)`) in one atomic
   * write, so recovery dispatches it at once. With `scope`, only a pause of that scope is lifted.
   * A run that is not paused (or paused with another scope) is left as it is (`changed: false`,
   * nothing written). Throws `RUN_NOT_FOUND` when the run does not exist and `RUN_CONFLICT` when
   * it is terminal; nothing is written then.
   */
  resumeRun(runId: string, now: number, scope?: PauseScope): Promise<PauseChange>;

  /**
   * Records `workflow` as paused. Idempotent: when it is paused already nothing is written and the
   * stored pause (with its first reason) is returned with `changed: false`.
   */
  pauseWorkflow(workflow: string, now: number, reason?: string): Promise<{ pause: WorkflowPause; changed: boolean }>;

  /** Removes the workflow's pause record; false (nothing written) when it had none. */
  resumeWorkflow(workflow: string): Promise<boolean>;

  /** The workflow's pause record, or `undefined`. Names come back byte-for-byte as written. */
  getWorkflowPause(workflow: string): Promise<WorkflowPause | undefined>;

  /** Every paused workflow, ordered by name as the backend compares names, at most 1000. */
  listWorkflowPauses(): Promise<WorkflowPause[]>;
}

/**
 * Bulk operations (`engine.bulk`; docs/operating.md, "Bulk operations"): one record per operation,
 * keyed by its id, holding its filter, action and progress. Every change after `create` is a
 * compare-and-set on `revision`, so of two processes working on one operation only one write
 * lands and the other stops. The store keeps the record as given (only `revision` is its own).
 * Optional: without it the engine refuses `bulk` (but not a dry run) with `BULK_UNSUPPORTED`.
 */
export interface BulkStore {
  /**
   * Inserts `operation` with `revision` 1 when no operation has its id; otherwise writes nothing
   * and returns the stored one with `created: false`.
   */
  create(operation: BulkOperationRecord): Promise<{ operation: BulkOperationRecord; created: boolean }>;

  /** One operation, or `undefined`. */
  get(id: string): Promise<BulkOperationRecord | undefined>;

  /**
   * Operations newest first (id descending, as the backend compares ids: UUIDv7 ids sort by
   * time), at most `limit` (1 to 1000), only those with an id before `before` in that order when
   * given (so a caller pages by the last id it got).
   */
  list(options: { limit: number; before?: string }): Promise<BulkOperationRecord[]>;

  /**
   * Compare-and-set: when the stored operation with `operation.id` has `revision` equal to
   * `expectedRevision`, replaces it with `operation` at `revision` = `expectedRevision + 1` and
   * returns what was written; otherwise (changed meanwhile, or deleted) writes nothing and returns
   * `undefined`. Of N concurrent updates from one revision exactly one lands.
   */
  update(operation: BulkOperationRecord, expectedRevision: number): Promise<BulkOperationRecord | undefined>;

  /** Deletes the operation's record (never a run); false when it did not exist. */
  delete(id: string): Promise<boolean>;
}

/** Attempt history, for timelines. */
export interface HistoryStore {
  /**
   * Every attempt of every step of the run, oldest first: ordered by `startedAt`, then the step's
   * `seq`, then `attempt`. Attempt numbers are stored values, never counted from rows.
   */
  list(runId: string): Promise<AttemptRecord[]>;
}

/** What a backend can and cannot do; the conformance suite skips cases by these, by name. */
export interface StoreCapabilities {
  /** Safe with several processes writing at once (false only for in-process stores). */
  multiProcess: boolean;
  /** The largest JSON payload (bytes of its UTF-8 serialisation) the backend stores. */
  maxPayloadBytes: number;
  /**
   * `steps.insert` records `NewStep.finishedAttempt` and stamps `StepRecord.fence`: an inline step
   * is then one write (recorded once finished). Absent or false: the engine records every inline
   * step's start before its body runs (two writes per step).
   */
  insertFinished?: boolean;
}

/**
 * Wake-up signals between the instances of a store that share its data (processes): PostgreSQL
 * LISTEN/NOTIFY, Redis pub/sub, the memory store within its process. Optional: a store without it
 * is polled (the engine's recovery loop). Best effort by design: a signal may be lost (a listener
 * reconnecting, a process that starts listening late), so the store's due runs stay the truth and
 * a signal only says "look now".
 */
export interface StoreSignals {
  /**
   * Publishes `message` (at most 1000 characters) to every listener of `topic` on this store's
   * data, this instance's own listeners included; resolves once the store took it. Rejects with
   * `STORE_ERROR` when the store is unreachable (the signal is then lost, nothing else changes).
   */
  notify(topic: string, message: string): Promise<void>;
  /**
   * Calls `onSignal(message)` for each message published on `topic` from the time it resolves until
   * the returned function is called and has resolved. Calls `onSignal()` without a message when
   * messages may have been missed (the listening connection came back after an outage): look at the
   * store then. The listener survives outages (it reconnects on its own); `onSignal` must not throw.
   * Rejects with `STORE_ERROR` when it cannot start listening.
   *
   * Optional `onLost`: called (at most once per outage, never throwing) as soon as the listening
   * connection is found broken, so that a caller relying on signals falls back to polling until
   * `onSignal()` without a message says messages flow again. A backend that cannot tell may never
   * call it (its listeners then learn of the outage only from that `onSignal()`); the engine keeps
   * a slow re-read as the safety net either way.
   */
  listen(topic: string, onSignal: (message?: string) => void, onLost?: () => void): Promise<() => Promise<void>>;
}

/**
 * The store contract a backend implements. Every method is one atomic unit unless its TSDoc says
 * otherwise, and every write made while executing a run carries the run's fencing token.
 */
export interface WorkflowStore {
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  readonly runs: RunStore;
  readonly steps: StepStore;
  readonly state: StateStore;
  readonly events: EventStore;
  readonly versions: VersionStore;
  readonly history: HistoryStore;
  /** Schedules: cron-started workflows (see `ScheduleStore`). */
  readonly schedules: ScheduleStore;
  /**
   * Slots for concurrency and rate limits (see `SlotStore`). Optional while backends adopt it: the
   * engine refuses a workflow with a concurrency or rate limit on a store without it.
   */
  readonly slots?: SlotStore;
  /**
   * Named streams of a run (see `StreamStore`). Optional while backends adopt it: `ctx.emit` and
   * `engine.readStream` are refused with `STREAM_UNSUPPORTED` on a store without it.
   */
  readonly streams?: StreamStore;
  /**
   * Pause and resume (see `PauseStore`). Optional while backends adopt it: without it the engine
   * refuses `pause`, `resume`, `pauseWorkflow` and `resumeWorkflow` with `PAUSE_UNSUPPORTED`.
   */
  readonly pauses?: PauseStore;
  /**
   * Bulk operation records (see `BulkStore`). Optional while backends adopt it: without it the
   * engine refuses `bulk` with `BULK_UNSUPPORTED` (a dry run still counts).
   */
  readonly bulk?: BulkStore;
  /**
   * Optional: the backend's own consistency check, called by `engine.doctor()`. It looks for drift
   * the generic checks cannot see (index entries without their record, records missing from an
   * index...), examining at most `options.limit` entries per structure (never a full scan: it
   * reports a structure it stopped walking in `truncated`), and with `options.fix` repairs what is
   * safe and marks those findings `fixed`. Read-only without `fix`. Codes start with the backend's
   * name. A backend without drift to look for leaves it out. See docs/writing-a-backend.md.
   */
  doctor?(options: StoreDoctorOptions): Promise<StoreDoctorResult>;
  /**
   * Wake-up signals between processes, when the backend has them (see `StoreSignals`). Without a
   * distributed queue the engine uses them to hand runs started, woken or cancelled in one process
   * to the workers of another at once; without them, those workers find such runs by polling.
   */
  readonly signals?: StoreSignals;
  /** Releases what the store itself created (never a client the user passed in). */
  close(): Promise<void>;
}
