import type { Kysely, RawBuilder } from 'kysely';
import type { RunRecord, StepRecord } from '@cairn/core';
import type { Fence, NewStep, RunTransition, StepTransition } from '@cairn/core/backend';
import type { StoreContext } from '../context.js';
import type { RequestCancelVersion, RoutineParam, RunClaimVersion, StepRoutineVersion } from '../routines/params.js';
import type { ColumnKind } from '../schema/column-types.js';
import type { SlotWrites } from '../slots/slot-writes.js';
import type { TableNames } from '../schema/tables.js';

/** The SQL dialects the store speaks. */
export type SqlDialectName = 'postgres' | 'mysql' | 'sqlite';

/** The database type of the store's Kysely instances: none, as the store writes its own SQL with `sql` templates and decodes rows in its codecs. */
// biome-ignore lint/suspicious/noExplicitAny: Kysely's table-name checks need a database interface; with `any` every name is accepted, which a store that writes its own SQL needs
export type AnySchema = any;

/** A Kysely instance over any schema: the store writes its own SQL with `sql` templates. */
export type AnyKysely = Kysely<AnySchema>;

/**
 * What a run write reports: whether its compare-and-set matched, and the run after the call (the
 * row written, or the run as it stands when it did not match; undefined: no such run).
 */
export interface RunWriteResult {
  done: boolean;
  run: RunRecord | undefined;
}

/** A dialect's run writes, each one atomic compare-and-set (the checks and errors are the caller's). */
export interface RunWrites {
  /** Takes the lease when it is free, lapsed or the owner's own; the run claimed, or undefined. */
  claim(ctx: StoreContext, runId: string, owner: string, leaseMs: number, now: number): Promise<RunRecord | undefined>;
  /** Extends the lease of the fence holder of a live run. */
  renew(ctx: StoreContext, runId: string, fence: number, leaseMs: number, now: number): Promise<RunWriteResult>;
  /** Moves a live run from one of `t.from` to `t.to` at `fence`. */
  transition(ctx: StoreContext, runId: string, fence: number, t: RunTransition, now: number): Promise<RunWriteResult>;
  /**
   * Sets `cancel_requested` (the first reason is kept) and wakes a live run; the run after the
   * request, or as it is when terminal; undefined when missing.
   */
  requestCancel(ctx: StoreContext, runId: string, now: number, reason: string | null): Promise<RunRecord | undefined>;
}

/** A dialect's step writes: each one round trip that checks the run's fence and writes the attempts. */
export interface StepWrites {
  /** Inserts the step unless its key exists; the step as it stands after the call. */
  insert(ctx: StoreContext, runId: string, fence: Fence, step: NewStep, now: number): Promise<{ step: StepRecord; created: boolean }>;
  /** Compare-and-sets the step on status + attempt; `STEP_CONFLICT` when it does not match. */
  transition(ctx: StoreContext, runId: string, fence: Fence, t: StepTransition, now: number): Promise<StepRecord>;
}

/** One `state.set`, its values already in their stored forms. */
export interface StateWrite {
  runId: string;
  fence: Fence;
  /** The stored run id, key, key hash and JSON value. */
  id: string;
  key: string;
  hash: string;
  json: string;
  now: number;
}

/** How the dialect calls a stored routine (PostgreSQL functions, MySQL/MariaDB procedures). */
export interface RoutineCalls {
  /** The SQL text of a call of `name` with `params` as placeholders; fixed per routine. */
  text(name: string, params: readonly RoutineParam[]): string;
  /** The rows of the routine's result among what the driver returned for the call. */
  resultSet(rows: readonly unknown[]): readonly unknown[];
  /**
   * Sends `text`, a call of the routine `name`, in ONE round trip and returns what the driver
   * returned: a deadlock victim (a routine is one transaction, rolled back whole) is run again; a
   * routine missing from the database or older than the store (another argument list) is a
   * `STORE_ERROR` that says to run the migrations (`createdBy`: the migration that creates it,
   * when not the step routines').
   */
  send(ctx: StoreContext, name: string, text: string, args: readonly (string | number | null)[], createdBy?: string): Promise<readonly unknown[]>;
}

/** The DDL of a dialect's routines (SQLite: triggers) that migrations run, statement by statement. */
export interface RoutineStatements {
  /** What `cairn_0002_step_routines` creates, exactly as it always did (frozen, decision 21). */
  install(db: AnyKysely, names: TableNames): Promise<string[]>;
  /** Drops every routine (and SQLite's triggers) of every version: the down of `cairn_0002_step_routines`. */
  drop(names: TableNames): string[];
  /**
   * Replaces the step-write routines of version `from` with those of `to`, the old ones dropped, not
   * left as overloads (none on SQLite: its step statements live in the store).
   */
  replaceStep(db: AnyKysely, names: TableNames, from: StepRoutineVersion, to: StepRoutineVersion): Promise<string[]>;
  /**
   * What `cairn_0008_step_finished` installs so that a step insert can record a finished attempt 1
   * and stamp the fence: the step routines of 0003 replaced by those of 0008, or SQLite's trigger
   * that writes the attempt from the inserted row.
   */
  installFinishedStep(db: AnyKysely, names: TableNames): Promise<string[]>;
  /** The down of that: the step routines of 0003 back, or SQLite's trigger dropped. */
  removeFinishedStep(db: AnyKysely, names: TableNames): Promise<string[]>;
  /**
   * Puts the `run_request_cancel` routine of `version` in place of the one there (`cairn_0004_run_deadline`
   * and its down), where run writes are routines (MySQL/MariaDB); nothing elsewhere. It runs its
   * statements itself: MySQL reads the collation between the drop and the create, in that order
   * since 0004 shipped.
   */
  replaceRequestCancel(db: AnyKysely, names: TableNames, version: RequestCancelVersion): Promise<void>;
  /**
   * Puts the `run_claim` routine of `version` in place of the one there (`cairn_0015_run_pause` and
   * its down), where the claim is a routine (MySQL/MariaDB); nothing elsewhere. Runs its statements.
   */
  replaceRunClaim(db: AnyKysely, names: TableNames, version: RunClaimVersion): Promise<void>;
  /**
   * What `cairn_0012_step_insert_v2` installs: the step insert function `steps.insert` calls from
   * then on (PostgreSQL); nothing where that dialect's `steps.insert` does not change.
   */
  installStepInsertV2(db: AnyKysely, names: TableNames): Promise<string[]>;
  /** The down of that: the function dropped. */
  removeStepInsertV2(db: AnyKysely, names: TableNames): Promise<string[]>;
}

/**
 * The schema changes of the migrations where the dialects differ (the routines aside): column
 * types, table options, partial indexes, and how a change that may already be half done is made.
 * PostgreSQL and SQLite run each migration in one transaction, so a failed try left nothing;
 * MySQL/MariaDB commit each DDL statement, so their members look before they add or drop.
 */
export interface SchemaStatements {
  /** The SQL type of a column kind. */
  columnType(kind: ColumnKind): RawBuilder<unknown>;
  /**
   * What ends a `CREATE TABLE` of the store: MySQL/MariaDB's engine, character set and binary
   * NO PAD collation (so text keys compare byte for byte); empty on the others.
   */
  // SQL text, not a RawBuilder: a promise resolving to one would await it, which Kysely 0.27 and
  // 0.28 refuse ("don't await RawBuilder instances directly").
  tableOptions(db: AnyKysely): Promise<string>;
  /** Whether an index may have a `WHERE` (a partial index); MySQL/MariaDB have none and index every row. */
  readonly partialIndexes: boolean;
  /**
   * Drops `table` if a failed try of the migration that creates it left it (MySQL/MariaDB); does
   * nothing where the failed try was rolled back.
   */
  dropLeftoverTable(db: AnyKysely, table: string): Promise<void>;
  /** Adds a nullable column to a table of the store, unless a failed try already did. */
  addColumnOnce(db: AnyKysely, table: string, column: string, type: RawBuilder<unknown>): Promise<void>;
  /** Drops a column of a table of the store, unless a failed try already did. */
  dropColumnOnce(db: AnyKysely, table: string, column: string): Promise<void>;
  /** Creates an index on `columns` of `table`, unless a failed try already did. */
  createIndexOnce(db: AnyKysely, table: string, name: string, columns: readonly string[]): Promise<void>;
  /** Drops the index `name` of `table` if it exists. */
  dropIndexOnce(db: AnyKysely, table: string, name: string): Promise<void>;
}

/** What differs between the dialects, in one place. */
export interface SqlDialect {
  readonly name: SqlDialectName;
  /** The largest JSON payload in bytes the store advertises by default (16 MiB; MySQL/MariaDB 8 MiB). */
  readonly maxPayloadBytes: number;
  /** `steps.insert` and `steps.transition`. */
  readonly steps: StepWrites;
  /** `runs.claim`, `runs.renew`, `runs.transition`, `runs.requestCancel`. */
  readonly runs: RunWrites;
  /**
   * `state.set`: the run row locked (fence and terminal check, `updated_at` bumped) and the
   * (run, key) row upserted, all or nothing; `checkWritable`'s errors when the run refuses it.
   */
  setState(ctx: StoreContext, write: StateWrite): Promise<void>;
  /** The routines' (SQLite: triggers') DDL, for the migrations. */
  readonly routines: RoutineStatements;
  /** How routines are called; absent where the store has none (SQLite). */
  readonly routineCalls?: RoutineCalls;
  /** `UPDATE/INSERT ... RETURNING` is available (PostgreSQL, SQLite); MySQL/MariaDB read back instead. */
  readonly returning: boolean;
  /**
   * The locking clause that makes a `SELECT` of a run row in a write transaction exclusive
   * (`FOR UPDATE`; nothing on SQLite, whose write transactions are already exclusive).
   * `of` names the locked table alias on PostgreSQL (needed with outer joins).
   */
  lockForUpdate(of?: string): RawBuilder<unknown>;
  /** `FOR UPDATE SKIP LOCKED` where workers compete for rows; nothing on SQLite. */
  skipLocked(): RawBuilder<unknown>;
  /** `INSERT` that ignores a duplicate key (head of the statement). */
  insertIgnoreHead(): RawBuilder<unknown>;
  /** Tail that makes an `INSERT` ignore a duplicate key, for dialects that put it at the end. */
  insertIgnoreTail(): RawBuilder<unknown>;
  /**
   * `ON CONFLICT DO NOTHING` where it exists; empty on MySQL, where the caller catches the
   * duplicate-key error instead (`INSERT IGNORE` would also hide truncation errors).
   */
  onConflictDoNothing(): RawBuilder<unknown>;
  /** Tail of an upsert: on a duplicate of `keys`, overwrite `columns` with the inserted values. */
  upsertTail(keys: readonly string[], columns: readonly string[]): RawBuilder<unknown>;
  /**
   * Runs one write operation of the store. SQLite: one at a time per process, across every store
   * instance (see `sqliteDialect`). Absent on the servers, whose writes run at once.
   */
  exclusive?: <T>(fn: () => Promise<T>) => Promise<T>;
  /**
   * Runs `fn` in one write transaction (SQLite: `BEGIN IMMEDIATE`); a transaction the server rolled
   * back as a deadlock victim or serialization failure is run again (see `retryRolledBack`).
   */
  transaction<T>(db: AnyKysely, fn: (trx: AnyKysely) => Promise<T>): Promise<T>;
  /**
   * True when `error` means the server rolled the whole transaction back on its own (deadlock,
   * serialization failure), so running it again is safe.
   */
  isRolledBack(error: unknown): boolean;
  /** True when `error` is the driver's duplicate-key violation. */
  isDuplicateKey(error: unknown): boolean;
  /** The migrations' schema changes where the dialects differ (column types, table options, …). */
  readonly schema: SchemaStatements;
  /**
   * `slots.acquire` and `slots.release`: one call of the routines of `cairn_0011_slots`
   * (PostgreSQL functions, MySQL/MariaDB procedures), or the store's statements (SQLite).
   */
  slotWrites(ctx: StoreContext): SlotWrites;
  /** The DDL of the slot routines `cairn_0011_slots` creates (none on SQLite). */
  slotRoutines(db: AnyKysely, names: TableNames): Promise<string[]>;
  /** Drops those routines (if they exist). */
  dropSlotRoutines(names: TableNames): string[];
  /**
   * The SQL of a routine call sent as a named (prepared) statement, where the driver has them
   * (PostgreSQL over `pg`); absent elsewhere. Used with `KyselyStoreOptions.preparedStatements`.
   */
  namedStatement?(text: string): string;
  /**
   * True for an error that says the connection did not keep a named statement, or already held one
   * by that name (a pooler that hands each transaction another server connection): the statement
   * did not run, so the call can be sent again unnamed. Where `namedStatement` is.
   */
  lostNamedStatement?(error: unknown): boolean;
}
