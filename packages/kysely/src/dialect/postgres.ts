import { sql } from 'kysely';
import type { SqlDialect } from './types.js';

/** PostgreSQL (driver `pg`): `RETURNING`, data-modifying CTEs, row locks, `SKIP LOCKED`. */
export const postgresDialect: SqlDialect = {
  name: 'postgres',
  returning: true,
  lockForUpdate: (of) => (of === undefined ? sql`for update` : sql`for update of ${sql.id(of)}`),
  skipLocked: () => sql`for update skip locked`,
  insertIgnoreHead: () => sql`insert`,
  insertIgnoreTail: () => sql`on conflict do nothing`,
  onConflictDoNothing: () => sql`on conflict do nothing`,
  upsertTail: (keys, columns) =>
    sql`on conflict (${sql.join(keys.map((k) => sql.id(k)))}) do update set ${sql.join(columns.map((c) => sql`${sql.id(c)} = excluded.${sql.id(c)}`))}`,
  exclusive: (fn) => fn(),
  transaction: (db, fn) => db.transaction().execute(fn),
  isDuplicateKey: (error) => (error as { code?: unknown } | null)?.code === '23505',
};
