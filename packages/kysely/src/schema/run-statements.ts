import { sql } from 'kysely';
import type { AnyKysely } from '../dialect/types.js';

/** Runs SQL statements one after the other, in order (a routine's DDL, a trigger's). */
export async function runStatements(db: AnyKysely, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
