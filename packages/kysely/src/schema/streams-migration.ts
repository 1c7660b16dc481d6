import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import type { TableNames } from './tables.js';

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  // The table is new here: what a failed try left of it goes, and this one starts over.
  await dialect.schema.dropLeftoverTable(db, names.stream_entries);
  const type = dialect.schema.columnType;
  const options = await dialect.schema.tableOptions(db);
  let builder = db.schema
    .createTable(names.stream_entries)
    .addColumn('run_id', type('id'), (col) => col.notNull())
    .addColumn('stream_hash', type('hash'), (col) => col.notNull())
    .addColumn('idx', type('bigint'), (col) => col.notNull())
    .addColumn('stream', type('text'), (col) => col.notNull())
    .addColumn('data_json', type('json'))
    .addColumn('closed', type('flag'), (col) => col.notNull())
    .addColumn('written_at', type('bigint'), (col) => col.notNull())
    .addPrimaryKeyConstraint(`${names.prefix}stream_entries_pk`, ['run_id', 'stream_hash', 'idx']);
  if (options) builder = builder.modifyEnd(sql.raw(options));
  await builder.execute();
}

/**
 * `cairn_0013_streams`: the table `stream_entries`, one row per entry of a run's named stream
 * (`StreamStore`): keyed by (`run_id`, `stream_hash`, `idx`), the stream's name beside its hash,
 * `data_json` the chunk (NULL on the end marker), `closed` 1 on the end marker, `written_at`. The
 * primary key serves every read (a stream's entries from an index, a run's streams, the delete of
 * a run's entries). Down drops it.
 */
export function streamsMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => db.schema.dropTable(names.stream_entries).ifExists().execute(),
  };
}
