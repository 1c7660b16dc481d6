import { sql } from 'kysely';
import type { CairnMigration as Migration } from './migration-types.js';
import { detectDialect, dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialect } from '../dialect/types.js';
import type { ColumnKind } from './column-types.js';
import type { TableNames } from './tables.js';

type Column = readonly [name: string, kind: ColumnKind, nullable?: 'null'];

/** `events` as `cairn_0001_initial` created it: one row per (run, name); first write won. */
const V1_COLUMNS: readonly Column[] = [
  ['run_id', 'id'],
  ['name_hash', 'hash'],
  ['name', 'text'],
  ['payload_json', 'json'],
  ['delivered_at', 'bigint'],
];

/**
 * `events` from `cairn_0005_event_messages` on: one row per message, numbered per (run, name) from
 * 1 (`seq`), with the send's idempotency key (its hash, unique per run, and its text).
 */
const V5_COLUMNS: readonly Column[] = [
  ['run_id', 'id'],
  ['name_hash', 'hash'],
  ['seq', 'int'],
  ['name', 'text'],
  ['payload_json', 'json'],
  ['delivered_at', 'bigint'],
  ['idempotency_hash', 'hash', 'null'],
  ['idempotency_key', 'text', 'null'],
];

/** The unique index that makes a send's idempotency key count once per run. */
export const eventIdempotencyIndex = (names: TableNames): string => `${names.prefix}events_idempotency`;

async function createEvents(db: AnyKysely, table: string, pk: string, columns: readonly Column[], primaryKey: string[], dialect: SqlDialect): Promise<void> {
  const options = await dialect.schema.tableOptions(db);
  let builder = db.schema.createTable(table);
  for (const [column, kind, nullable] of columns) {
    builder = builder.addColumn(column, dialect.schema.columnType(kind), (col) => (nullable ? col : col.notNull()));
  }
  builder = builder.addPrimaryKeyConstraint(pk, primaryKey as never);
  if (options) builder = builder.modifyEnd(sql.raw(options));
  await builder.execute();
}

// A new table is filled from the old one, which is then dropped and the new one renamed: the one
// way to change a primary key that SQLite, PostgreSQL and MySQL/MariaDB all support. The new
// table's name and constraint names never clash with the old ones while both exist.
async function up(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  const next = `${names.events}_v5`;
  // What a failed try left of the new table goes, and this one starts over cleanly.
  await dialect.schema.dropLeftoverTable(db, next);
  await createEvents(db, next, `${names.prefix}events_v5_pk`, V5_COLUMNS, ['run_id', 'name_hash', 'seq'], dialect);
  // Each stored event becomes message 1 of its name.
  await sql`insert into ${sql.table(next)} (run_id, name_hash, seq, name, payload_json, delivered_at)
    select run_id, name_hash, 1, name, payload_json, delivered_at from ${sql.table(names.events)}`.execute(db);
  await db.schema.dropTable(names.events).execute();
  await db.schema.alterTable(next).renameTo(names.events).execute();
  await db.schema.createIndex(eventIdempotencyIndex(names)).on(names.events).columns(['run_id', 'idempotency_hash']).unique().execute();
}

async function down(db: AnyKysely, names: TableNames, dialect: SqlDialect): Promise<void> {
  const previous = `${names.events}_v1`;
  await dialect.schema.dropLeftoverTable(db, previous);
  await createEvents(db, previous, `${names.prefix}events_v1_pk`, V1_COLUMNS, ['run_id', 'name_hash'], dialect);
  // 0001 kept one event per name: the first message.
  await sql`insert into ${sql.table(previous)} (run_id, name_hash, name, payload_json, delivered_at)
    select run_id, name_hash, name, payload_json, delivered_at from ${sql.table(names.events)} where seq = 1`.execute(db);
  await db.schema.dropTable(names.events).execute();
  await db.schema.alterTable(previous).renameTo(names.events).execute();
}

/**
 * `cairn_0005_event_messages`: `events` keeps every message. Its key becomes (run_id, name_hash,
 * seq) with `seq` numbering the messages of one (run, name) from 1, plus the nullable
 * `idempotency_hash` / `idempotency_key` of the send and a unique index on (run_id,
 * idempotency_hash). Events stored before become message 1 of their name. Down keeps message 1 of
 * each name in the table shape of 0001 (later messages are dropped).
 */
export function eventMessagesMigration(names: TableNames): Migration {
  return {
    up: (db) => up(db, names, dialectOf(detectDialect(db))),
    down: (db) => down(db, names, dialectOf(detectDialect(db))),
  };
}
