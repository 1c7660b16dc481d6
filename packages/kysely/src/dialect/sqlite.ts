import { sql } from 'kysely';
import type { AnyKysely, SqlDialect } from './types.js';

/**
 * SQLite (driver `better-sqlite3`). Kysely runs it on one connection guarded by a mutex, and a
 * transaction holds that connection from `BEGIN IMMEDIATE` to `COMMIT`, so concurrent async
 * callers never interleave inside one. `BEGIN IMMEDIATE` takes the write lock up front, so a
 * transaction that reads then writes cannot fail to upgrade when another process writes
 * (`busy_timeout` makes it wait instead).
 */
export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  returning: true,
  lockForUpdate: () => sql``,
  skipLocked: () => sql``,
  insertIgnoreHead: () => sql`insert`,
  insertIgnoreTail: () => sql`on conflict do nothing`,
  onConflictDoNothing: () => sql`on conflict do nothing`,
  upsertTail: (keys, columns) =>
    sql`on conflict (${sql.join(keys.map((k) => sql.id(k)))}) do update set ${sql.join(columns.map((c) => sql`${sql.id(c)} = excluded.${sql.id(c)}`))}`,
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
  isDuplicateKey: (error) => {
    const code = (error as { code?: unknown } | null)?.code;
    return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
  },
};
