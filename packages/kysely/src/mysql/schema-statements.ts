import { sql } from 'kysely';
import { sharedSchemaStatements } from '../dialect/shared-schema-statements.js';
import type { SchemaStatements } from '../dialect/types.js';
import { mysqlCollation } from './collation.js';
import { mysqlColumnTypes } from './column-types.js';
import { mysqlHasColumn } from './has-column.js';
import { mysqlHasIndex } from './has-index.js';

const shared = sharedSchemaStatements(mysqlColumnTypes);

/**
 * MySQL/MariaDB's schema changes. Their DDL commits statement by statement, so a migration that
 * failed half-way is run again over what it did: each change looks first (information_schema) and
 * a table the migration creates is dropped if a failed try left it.
 */
export const mysqlSchemaStatements: SchemaStatements = {
  columnType: shared.columnType,
  tableOptions: async (db) => `engine=InnoDB default charset=utf8mb4 collate=${await mysqlCollation(db)}`,
  // No partial indexes: an index with a WHERE is created over every row.
  partialIndexes: false,
  dropLeftoverTable: async (db, table) => {
    await db.schema.dropTable(table).ifExists().execute();
  },
  addColumnOnce: async (db, table, column, type) => {
    if (!(await mysqlHasColumn(db, table, column))) await shared.addColumnOnce(db, table, column, type);
  },
  dropColumnOnce: async (db, table, column) => {
    if (await mysqlHasColumn(db, table, column)) await shared.dropColumnOnce(db, table, column);
  },
  createIndexOnce: async (db, table, name, columns) => {
    if (!(await mysqlHasIndex(db, table, name))) await shared.createIndexOnce(db, table, name, columns);
  },
  // MySQL 8 has no DROP INDEX IF EXISTS (MariaDB has), and both name the table.
  dropIndexOnce: async (db, table, name) => {
    if (await mysqlHasIndex(db, table, name)) await sql`drop index ${sql.id(name)} on ${sql.table(table)}`.execute(db);
  },
};
