import { sql } from 'kysely';
import type { AnyKysely } from '../dialect/types.js';

/**
 * Whether `table` has `column` on MySQL/MariaDB, whose DDL commits statement by statement: a
 * migration that failed after its `ALTER TABLE … ADD COLUMN` checks before adding it again.
 */
export async function mysqlHasColumn(db: AnyKysely, table: string, column: string): Promise<boolean> {
  const { rows } = await sql<{ n: unknown }>`select count(*) as n from information_schema.columns
    where table_schema = database() and table_name = ${table} and column_name = ${column}`.execute(db);
  return Number(rows[0]?.n ?? 0) > 0;
}
