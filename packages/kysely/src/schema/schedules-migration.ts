import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect } from '../dialect/detect.js';
import type { AnyKysely, SqlDialectName } from '../dialect/types.js';
import { mysqlCollation } from '../mysql/collation.js';
import { columnType } from './column-types.js';
import type { TableNames } from './tables.js';

/** The index that serves `schedules.findDue`: due schedules in `due_at` order, paused ones (NULL) left out where the dialect allows. */
export const scheduleDueIndex = (names: TableNames): string => `${names.prefix}schedules_due`;

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  // MySQL/MariaDB commit each DDL statement: a try that failed half-way starts over (the table is new).
  if (dialect === 'mysql') await db.schema.dropTable(names.schedules).ifExists().execute();
  let builder = db.schema
    .createTable(names.schedules)
    .addColumn('name', columnType(dialect, 'name'), (col) => col.notNull())
    .addColumn('revision', columnType(dialect, 'bigint'), (col) => col.notNull())
    .addColumn('due_at', columnType(dialect, 'bigint'))
    .addColumn('record_json', columnType(dialect, 'json'), (col) => col.notNull())
    .addPrimaryKeyConstraint(`${names.prefix}schedules_pk`, ['name']);
  if (dialect === 'mysql') builder = builder.modifyEnd(sql.raw(`engine=InnoDB default charset=utf8mb4 collate=${await mysqlCollation(db)}`));
  await builder.execute();
  let index = db.schema.createIndex(scheduleDueIndex(names)).on(names.schedules).columns(['due_at', 'name']);
  if (dialect !== 'mysql') index = index.where(sql.raw<boolean>('due_at is not null'));
  await index.execute();
}

/**
 * `cairn_0010_schedules`: the table `schedules` (one row per schedule: `name` the key,
 * `revision` the compare-and-set token, `due_at` the indexed time a loop must look at it, NULL when
 * paused, and `record_json` the whole `ScheduleRecord`) and its index on (`due_at`, `name`). Down
 * drops both.
 */
export function schedulesMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, detectDialect(db)),
    down: (db) => db.schema.dropTable(names.schedules).ifExists().execute(),
  };
}
