import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import type { TableNames } from './tables.js';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  // The table is new here: what a failed try left of it goes, and this one starts over.
  await dialect.schema.dropLeftoverTable(db, names.bulk_operations);
  const type = dialect.schema.columnType;
  const options = await dialect.schema.tableOptions(db);
  let builder = db.schema
    .createTable(names.bulk_operations)
    .addColumn('id', type('id'), (col) => col.notNull())
    .addColumn('revision', type('bigint'), (col) => col.notNull())
    .addColumn('record_json', type('json'), (col) => col.notNull())
    .addPrimaryKeyConstraint(`${names.prefix}bulk_operations_pk`, ['id']);
  if (options) builder = builder.modifyEnd(sql.raw(options));
  await builder.execute();
}

/**
 * `cairn_0016_bulk_operations`: the table `bulk_operations` (one row per `engine.bulk` operation:
 * `id` the key, which its primary key index also serves the newest-first listing from, `revision`
 * the compare-and-set token, `record_json` the whole `BulkOperationRecord`). Down drops it.
 */
export function bulkOperationsMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => db.schema.dropTable(names.bulk_operations).ifExists().execute(),
  };
}
