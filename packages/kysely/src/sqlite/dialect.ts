import { sql } from 'kysely';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import { statementRunWrites } from '../run-statement-writes.js';
import { sqliteSetState } from './state-set.js';
import { sqliteStepWrites } from './step-writes.js';
import { sqliteRoutineStatements } from './routine-statements.js';
import { sqliteSchemaStatements } from './schema-statements.js';
import { sqliteSlotWrites } from './slot-writes.js';

// better-sqlite3 is synchronous: while one connection of this process holds the write lock and
// awaits, another connection of the same process that tries to write blocks the whole thread in
// busy_timeout, so the holder can never finish (a self-deadlock until the timeout). Writes of every
// store instance in the process therefore take turns on one process-wide queue (shared through
// globalThis, so two copies of the package share it too). Other processes wait in busy_timeout.
const LOCK_KEY = Symbol.for('@cairn/kysely:sqlite-write-queue');
type WriteQueue = { tail: Promise<void> };
const queue: WriteQueue = ((globalThis as Record<symbol, WriteQueue | undefined>)[LOCK_KEY] ??= { tail: Promise.resolve() });

function exclusive<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.tail.then(fn);
  queue.tail = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

/**
 * SQLite (driver `better-sqlite3`). Kysely runs it on one connection guarded by a mutex, and a
 * transaction holds that connection from `BEGIN IMMEDIATE` to `COMMIT`, so concurrent async
 * callers never interleave inside one. `BEGIN IMMEDIATE` takes the write lock up front, so a
 * transaction that reads then writes cannot fail to upgrade when another process writes
 * (`busy_timeout` makes it wait instead).
 */
export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  maxPayloadBytes: 16 * 1024 * 1024,
  steps: sqliteStepWrites,
  runs: statementRunWrites,
  setState: sqliteSetState,
  routines: sqliteRoutineStatements,
  returning: true,
  lockForUpdate: () => sql``,
  skipLocked: () => sql``,
  insertIgnoreHead: () => sql`insert`,
  insertIgnoreTail: () => sql`on conflict do nothing`,
  onConflictDoNothing: () => sql`on conflict do nothing`,
  upsertTail: (keys, columns) =>
    sql`on conflict (${sql.join(keys.map((k) => sql.id(k)))}) do update set ${sql.join(columns.map((c) => sql`${sql.id(c)} = excluded.${sql.id(c)}`))}`,
  exclusive,
  transaction: <T>(db: AnyKysely, fn: (trx: AnyKysely) => Promise<T>) =>
    db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn);
      let result: T;
      try {
        result = await fn(conn);
      } catch (error) {
        try {
          await sql`rollback`.execute(conn);
        } catch {
          // The transaction may already be gone (SQLite rolls back on some errors itself).
        }
        throw error;
      }
      await sql`commit`.execute(conn);
      return result;
    }),
  // SQLite's writers queue on the database lock (busy_timeout) instead of deadlocking.
  isRolledBack: () => false,
  isDuplicateKey: (error) => {
    const code = (error as { code?: unknown } | null)?.code;
    return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
  },
  schema: sqliteSchemaStatements,
  slotWrites: sqliteSlotWrites,
  slotRoutines: async () => [],
  dropSlotRoutines: () => [],
};
