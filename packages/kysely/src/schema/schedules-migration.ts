import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import type { TableNames } from './tables.js';

/** The index that serves `schedules.findDue`: due schedules in `due_at` order, paused ones (NULL) left out where the dialect allows. */
export const scheduleDueIndex = (names: TableNames): string => `${names.prefix}schedules_due`;

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  // The table is new here: what a failed try left of it goes, and this one starts over.
  await dialect.schema.dropLeftoverTable(db, names.schedules);
  const type = dialect.schema.columnType;
  const options = await dialect.schema.tableOptions(db);
  let builder = db.schema
    .createTable(names.schedules)
    .addColumn('name', type('name'), (col) => col.notNull())
    .addColumn('revision', type('bigint'), (col) => col.notNull())
    .addColumn('due_at', type('bigint'))
    .addColumn('record_json', type('json'), (col) => col.notNull())
    .addPrimaryKeyConstraint(`${names.prefix}schedules_pk`, ['name']);
  if (options) builder = builder.modifyEnd(sql.raw(options));
  await builder.execute();
  let index = db.schema.createIndex(scheduleDueIndex(names)).on(names.schedules).columns(['due_at', 'name']);
  if (dialect.schema.partialIndexes) index = index.where(sql.raw<boolean>('due_at is not null'));
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
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => db.schema.dropTable(names.schedules).ifExists().execute(),
  };
}
