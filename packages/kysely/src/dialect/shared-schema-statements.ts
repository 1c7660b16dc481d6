import { sql } from 'kysely';
import type { ColumnKind } from '../schema/column-types.js';
import type { SchemaStatements } from './types.js';

/**
 * The migrations' schema changes in the SQL the dialects share, for a dialect whose migration runs in
 * one transaction (PostgreSQL, SQLite): a failed try left nothing behind, so nothing is looked up
 * first. MySQL/MariaDB build on these behind their checks.
 */
export function sharedSchemaStatements(types: Readonly<Record<ColumnKind, string>>): SchemaStatements {
  return {
    columnType: (kind) => sql.raw(types[kind]),
    tableOptions: async () => '',
    partialIndexes: true,
    dropLeftoverTable: async () => {},
    addColumnOnce: async (db, table, column, type) => {
      await db.schema.alterTable(table).addColumn(column, type).execute();
    },
    dropColumnOnce: async (db, table, column) => {
      await db.schema.alterTable(table).dropColumn(column).execute();
    },
    createIndexOnce: async (db, table, name, columns) => {
      await db.schema
        .createIndex(name)
        .on(table)
        .columns(columns as string[])
        .execute();
    },
    dropIndexOnce: async (db, _table, name) => {
      await db.schema.dropIndex(name).ifExists().execute();
    },
  };
}
