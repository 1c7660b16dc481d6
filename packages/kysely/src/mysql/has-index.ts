import { sql } from 'kysely';
import type { AnyKysely } from '../dialect/types.js';

/**
 * Whether `table` has the index `index` on MySQL/MariaDB, whose DDL commits statement by statement:
 * a migration that failed after its `CREATE INDEX` checks before creating it again.
 */
export async function mysqlHasIndex(db: AnyKysely, table: string, index: string): Promise<boolean> {
  const { rows } = await sql<{ n: unknown }>`select count(*) as n from information_schema.statistics
    where table_schema = database() and table_name = ${table} and index_name = ${index}`.execute(db);
  return Number(rows[0]?.n ?? 0) > 0;
}
