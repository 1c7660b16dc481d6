import { sql } from 'kysely';
import type { AnyKysely } from '../dialect/types.js';

/**
 * The collation of the store's text columns on MySQL/MariaDB: binary and NO PAD, so 'a' and 'a '
 * stay different keys and comparisons are byte order.
 */
export async function mysqlCollation(db: AnyKysely): Promise<string> {
  const { rows } = await sql<{ v: string }>`select version() as v`.execute(db);
  return String(rows[0]?.v ?? '')
    .toLowerCase()
    .includes('mariadb')
    ? 'utf8mb4_nopad_bin'
    : 'utf8mb4_0900_bin';
}
