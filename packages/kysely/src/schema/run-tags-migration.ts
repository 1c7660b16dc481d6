import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import { TAG_WRITES_COLUMN, TAGS_COLUMN } from './added-columns.js';
import type { TableNames } from './tables.js';

/** The index `cairn_0017_run_tags` adds to `run_tags`: a tag's runs, newest first. */
export const RUN_TAGS_INDEX = { name: 'run_tags_find', columns: ['tag_hash', 'run_created_at', 'run_id'] } as const;

async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  const type = dialect.schema.columnType;
  await dialect.schema.addColumnOnce(db, names.runs, TAGS_COLUMN, type('json'));
  await dialect.schema.addColumnOnce(db, names.runs, TAG_WRITES_COLUMN, type('int'));
  // The table is new here: what a failed try left of it goes, and this one starts over.
  await dialect.schema.dropLeftoverTable(db, names.run_tags);
  const options = await dialect.schema.tableOptions(db);
  let builder = db.schema
    .createTable(names.run_tags)
    .addColumn('run_id', type('id'), (col) => col.notNull())
    .addColumn('tag_hash', type('hash'), (col) => col.notNull())
    .addColumn('tag_key', type('text'), (col) => col.notNull())
    .addColumn('tag_value', type('text'), (col) => col.notNull())
    .addColumn('run_created_at', type('bigint'), (col) => col.notNull())
    .addPrimaryKeyConstraint(`${names.prefix}run_tags_pk`, ['run_id', 'tag_hash']);
  if (options) builder = builder.modifyEnd(sql.raw(options));
  await builder.execute();
  await dialect.schema.createIndexOnce(db, names.run_tags, `${names.prefix}${RUN_TAGS_INDEX.name}`, RUN_TAGS_INDEX.columns);
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  await db.schema.dropTable(names.run_tags).ifExists().execute();
  await dialect.schema.dropColumnOnce(db, names.runs, TAG_WRITES_COLUMN);
  await dialect.schema.dropColumnOnce(db, names.runs, TAGS_COLUMN);
}

/**
 * `cairn_0017_run_tags`: the nullable columns `runs.tags_json` (`RunRecord.tags` as JSON text) and
 * `runs.tag_writes` (`RunRecord.tagWrites`), existing runs keeping NULL (no tags); the table
 * `run_tags`, one row per tag of a run, keyed by (`run_id`, `tag_hash`), with the index
 * (`tag_hash`, `run_created_at`, `run_id`) that `runs.list({ tags })` walks newest first. The
 * hash (SHA-256 of the key and value) keeps the index narrow whatever the lengths and compares
 * bytes, not a collation. Down drops the table and the columns.
 */
export function runTagsMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => down(db, names, dialectOf(detectDialect(db))),
  };
}
