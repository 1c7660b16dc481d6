import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import { PAUSED_COLUMN } from './added-columns.js';
import type { TableNames } from './tables.js';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  const type = dialect.schema.columnType;
  await dialect.schema.addColumnOnce(db, names.runs, PAUSED_COLUMN, type('json'));
  // The table is new here: what a failed try left of it goes, and this one starts over.
  await dialect.schema.dropLeftoverTable(db, names.pauses);
  const options = await dialect.schema.tableOptions(db);
  let builder = db.schema
    .createTable(names.pauses)
    .addColumn('workflow', type('name'), (col) => col.notNull())
    .addColumn('record_json', type('json'), (col) => col.notNull())
    .addPrimaryKeyConstraint(`${names.prefix}pauses_pk`, ['workflow']);
  if (options) builder = builder.modifyEnd(sql.raw(options));
  await builder.execute();
  await dialect.routines.replaceRunClaim(db, names, '0015');
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  // The claim procedure of 0015 names paused_json, so it goes first.
  await dialect.routines.replaceRunClaim(db, names, '0002');
  await db.schema.dropTable(names.pauses).ifExists().execute();
  await dialect.schema.dropColumnOnce(db, names.runs, PAUSED_COLUMN);
}

/**
 * `cairn_0015_run_pause`: the nullable column `runs.paused_json` (JSON text, `RunRecord.paused`;
 * existing runs keep NULL, read back as not paused), the table `pauses` (one row per paused
 * workflow: `workflow` the key, `record_json` the `WorkflowPause`), and on MySQL/MariaDB the
 * `run_claim` procedure replaced by one that refuses a paused run (PostgreSQL and SQLite claim with
 * a statement of the store). Down restores the procedure of 0002 and drops the table and column.
 */
export function runPauseMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => down(db, names, dialectOf(detectDialect(db))),
  };
}
