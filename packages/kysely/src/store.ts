import { CairnError } from '@cairn/core';
import { withArgumentChecks, type StoreSignals, type WorkflowStore } from '@cairn/core/backend';

import { createContext } from './context.js';
import { detectDialect, dialectOf } from './dialect/detect.js';
import type { AnyKysely, SqlDialectName } from './dialect/types.js';
import { deliverEvent, getEvent } from './events.js';
import { listHistory } from './history.js';
import { claimRun, findDue, keepPromise, promiseWake, renewRun, requestCancel, transitionRun, wakeRun } from './runs-lease.js';
import { createRun, deleteRun, getRun, listRuns } from './runs.js';
import { setRunTags } from './run-tags.js';
import { deleteRuns } from './runs-delete-many.js';
import { findByIdempotencyKey, listEnded, reopenRun } from './runs-operations.js';
import { tableNames } from './schema/tables.js';
import { getState, setState } from './state.js';
import { insertStep, loadSteps, transitionStep } from './steps.js';
import { versionsOf } from './versions.js';
import { schedulesOf } from './schedules.js';
import { slotsOf } from './slots/slots.js';
import { streamsOf } from './streams.js';
import { pausesOf } from './pauses.js';
import { bulkOperationsOf } from './bulk-operations.js';

/** Options of `createKyselyStore`. */
export interface KyselyStoreOptions {
  /** Your Kysely instance. The store never destroys it (unless `ownsDb`). */
  db: AnyKysely;
  /** The SQL dialect; detected from the Kysely adapter when omitted. */
  dialect?: SqlDialectName;
  /** Prefix of every table name (default `cairn_`); must match the one the migrations used. */
  tablePrefix?: string;
  /**
   * PostgreSQL only: commit the start write of an inline step (`steps.insert` of a `running` step)
   * with `synchronous_commit = off` (default true). A crash may then forget that an attempt began
   * (it is retried on replay); the finish write stays durable and flushes it with itself.
   */
  asyncStartCommit?: boolean;
  /**
   * PostgreSQL over `pg` only: send the step and run routine calls as named (prepared) statements,
   * parsed and planned once per connection instead of on every call (default false here, true in
   * `openPostgresStore`, which knows its driver). Only with Kysely's `PostgresDialect` over a `pg`
   * Pool: the store hands `pg` a named query through Kysely, which another driver would not
   * understand. Behind a pooler that does not keep prepared statements per client (PgBouncer in
   * transaction mode before 1.21) the first call the server refuses (`26000`, `42P05`: it did not
   * run) is sent again unnamed, and the store sends every later call unnamed, with one process
   * warning (`CairnWarning`, code `CAIRN_NAMED_STATEMENTS_DROPPED`); pass `false` to skip that.
   * Refused with `INVALID_INPUT` on MySQL and SQLite.
   */
  preparedStatements?: boolean;
  /**
   * PostgreSQL only: group commit of step writes (default true). A step write that finds the
   * store's step write line free goes out at once, alone, as one function call; step writes that
   * arrive while one is in flight (other executions of this process writing at the same time) go
   * out together when it returns, as ONE statement and one transaction. No timer: a lone write
   * never waits for company. Each write still gets only its own outcome (`LEASE_LOST`,
   * `RUN_CONFLICT`, `STEP_CONFLICT`, a step that exists); a statement the server refuses for what
   * one write holds is sent again write by write, so only that write fails; a statement that fails
   * for its connection fails every write in it with `STORE_ERROR`, and none of it, or all of it,
   * was applied. `false`: every step write is its own statement, as before. Ignored by MySQL and
   * SQLite.
   */
  groupCommit?: boolean;
  /**
   * PostgreSQL only: how many group commit statements each of the store's two step write lines
   * (step inserts, step transitions) keeps in flight at once, each on its own pooled connection
   * (default 8; an integer from 1 to 64). A second statement goes out beside one in flight only
   * when at least 8 writes are waiting for it, so fewer concurrent writers share one statement
   * and one commit as with 1; many writers (dozens of executions in flight) are split over several
   * statements that the server runs side by side. 1: one statement at a time, as before this
   * option. Ignored with `groupCommit: false`, and by MySQL and SQLite.
   */
  groupCommitStatements?: number;
  /** Largest JSON payload in bytes the store advertises (default: 16 MiB; MySQL 8 MiB). */
  maxPayloadBytes?: number;
  /** `close()` destroys `db` (for stores that created their own Kysely instance). Default false. */
  ownsDb?: boolean;
  /**
   * Wake-up signals between processes (`WorkflowStore.signals`); PostgreSQL:
   * `createPostgresSignals` from `@cairn/kysely/postgres` (`openPostgresStore` adds them itself).
   * Without them (MySQL, SQLite), engines find work started elsewhere by polling. The store's
   * `close()` calls their `close()`, if they have one.
   */
  signals?: StoreSignals & { close?(): Promise<void> };
}

/**
 * A `WorkflowStore` over your Kysely instance: PostgreSQL (`pg`), MySQL/MariaDB (`mysql2`) or
 * SQLite (`better-sqlite3`). Create the tables first with `migrateToLatest(db)` or with
 * `cairnMigrations()` in your own `Migrator`; the store issues no DDL.
 */
export function createKyselyStore(options: KyselyStoreOptions): WorkflowStore {
  const dialect = dialectOf(options.dialect ?? detectDialect(options.db));
  if (options.preparedStatements !== undefined && typeof options.preparedStatements !== 'boolean') {
    throw new CairnError('INVALID_INPUT', `createKyselyStore: preparedStatements must be a boolean, got ${typeof options.preparedStatements}`);
  }
  if (options.groupCommit !== undefined && typeof options.groupCommit !== 'boolean') {
    throw new CairnError('INVALID_INPUT', `createKyselyStore: groupCommit must be a boolean, got ${typeof options.groupCommit}`);
  }
  const statements = options.groupCommitStatements;
  if (statements !== undefined && (!Number.isInteger(statements) || statements < 1 || statements > 64)) {
    throw new CairnError('INVALID_INPUT', `createKyselyStore: groupCommitStatements must be an integer from 1 to 64, got ${String(statements)}`);
  }
  if (options.preparedStatements === true && dialect.namedStatement === undefined) {
    throw new CairnError('INVALID_INPUT', `createKyselyStore: preparedStatements is for PostgreSQL (over pg) only, not ${dialect.name}`);
  }
  const ctx = createContext(
    options.db,
    dialect,
    tableNames(options.tablePrefix ?? 'cairn_'),
    options.asyncStartCommit ?? true,
    options.preparedStatements === true,
    options.groupCommit ?? true,
    statements,
  );
  const versions = versionsOf(ctx);
  const schedules = schedulesOf(ctx);
  const slots = slotsOf(ctx);
  const streams = streamsOf(ctx);
  const pauses = pausesOf(ctx);
  const bulk = bulkOperationsOf(ctx);
  // Every write goes through the dialect's `exclusive` (SQLite: one writer per process at a time);
  // where writes need no turn-taking (the servers) the write is the function itself, with no
  // wrapper call per write.
  const { exclusive } = dialect;
  const write = <A extends unknown[], R>(fn: (...args: A) => Promise<R>): ((...args: A) => Promise<R>) =>
    exclusive === undefined ? fn : (...args: A): Promise<R> => exclusive(() => fn(...args));
  let closed = false;
  // Arguments of the wrong runtime type get INVALID_INPUT, never a TypeError from a codec.
  return withArgumentChecks({
    name: `kysely-${dialect.name}`,
    capabilities: {
      multiProcess: true,
      maxPayloadBytes: options.maxPayloadBytes ?? dialect.maxPayloadBytes,
      // cairn_0008_step_finished: an inline step is one routine call (SQLite: one statement).
      insertFinished: true,
    },
    runs: {
      create: write(createRun(ctx)),
      get: getRun(ctx),
      list: listRuns(ctx),
      claim: write(claimRun(ctx)),
      renew: write(renewRun(ctx)),
      transition: write(transitionRun(ctx)),
      wake: write(wakeRun(ctx)),
      promiseWake: write(promiseWake(ctx)),
      keepPromise: write(keepPromise(ctx)),
      requestCancel: write(requestCancel(ctx)),
      findDue: findDue(ctx),
      findByIdempotencyKey: findByIdempotencyKey(ctx),
      reopen: write(reopenRun(ctx)),
      listEnded: listEnded(ctx),
      delete: write(deleteRun(ctx)),
      deleteMany: write(deleteRuns(ctx)),
      // cairn_0017_run_tags: runs.tags_json and tag_writes, one run_tags row per tag (the index).
      setTags: write(setRunTags(ctx)),
    },
    steps: { load: loadSteps(ctx), insert: write(insertStep(ctx)), transition: write(transitionStep(ctx)) },
    state: { set: write(setState(ctx)), get: getState(ctx) },
    events: { deliver: write(deliverEvent(ctx)), get: getEvent(ctx) },
    versions: { ...versions, upsert: write(versions.upsert), setStatus: write(versions.setStatus) },
    history: { list: listHistory(ctx) },
    schedules: { ...schedules, create: write(schedules.create), update: write(schedules.update), delete: write(schedules.delete) },
    // cairn_0011_slots: slot rows per key, taken by conditional updates under a per-key row lock.
    slots: { ...slots, acquire: write(slots.acquire), renew: write(slots.renew), release: write(slots.release) },
    // cairn_0013_streams: one row per entry, appended under the run row's lock.
    streams: { ...streams, append: write(streams.append) },
    // cairn_0015_run_pause: runs.paused_json, which the claim and the due scan require NULL.
    pauses: {
      ...pauses,
      pauseRun: write(pauses.pauseRun),
      resumeRun: write(pauses.resumeRun),
      pauseWorkflow: write(pauses.pauseWorkflow),
      resumeWorkflow: write(pauses.resumeWorkflow),
    },
    // cairn_0016_bulk_operations: one row per bulk operation, changed by compare-and-set on revision.
    bulk: { ...bulk, create: write(bulk.create), update: write(bulk.update), delete: write(bulk.delete) },
    ...(options.signals === undefined ? {} : { signals: options.signals }),
    async close() {
      if (closed) return;
      closed = true;
      await options.signals?.close?.();
      if (options.ownsDb) await options.db.destroy();
    },
  });
}
