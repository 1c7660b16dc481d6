import type { RawBuilder } from 'kysely';
import type { AnyKysely } from './types.js';

/** `ALTER TABLE … ADD COLUMN` of a nullable column, in the SQL every dialect shares. */
export async function addColumn(db: AnyKysely, table: string, column: string, type: RawBuilder<unknown>): Promise<void> {
  await db.schema.alterTable(table).addColumn(column, type).execute();
}
