import { sql, type RawBuilder } from 'kysely';
import type { SqlDialectName } from '../dialect/types.js';

/** The kinds of column the schema uses, mapped to each dialect's type. */
export type ColumnKind = 'id' | 'name' | 'hash' | 'short' | 'text' | 'json' | 'bigint' | 'int' | 'flag' | 'ordered';

// PostgreSQL: identifiers compare bytewise (COLLATE "C"), so ordering matches the reference store.
// MySQL/MariaDB: lengths bound index sizes (utf8mb4: 4 bytes a character, 3072 bytes a key), JSON
// needs LONGTEXT (TEXT stops at 64 KiB). SQLite: TEXT compares bytewise already. `ordered` is text
// of any length that queries sort by (slot waiters' holders): bytewise everywhere, never indexed.
const TYPES: Record<SqlDialectName, Record<ColumnKind, string>> = {
  postgres: {
    id: 'text collate "C"',
    name: 'text collate "C"',
    hash: 'text collate "C"',
    short: 'text',
    text: 'text',
    json: 'text',
    bigint: 'bigint',
    int: 'integer',
    flag: 'smallint',
    ordered: 'text collate "C"',
  },
  mysql: {
    id: 'varchar(128)',
    name: 'varchar(255)',
    hash: 'char(64) character set ascii collate ascii_bin',
    short: 'varchar(16)',
    text: 'text',
    json: 'longtext',
    bigint: 'bigint',
    int: 'integer',
    flag: 'smallint',
    // The tables' binary NO PAD collation applies.
    ordered: 'text',
  },
  sqlite: {
    id: 'text',
    name: 'text',
    hash: 'text',
    short: 'text',
    text: 'text',
    json: 'text',
    bigint: 'integer',
    int: 'integer',
    flag: 'integer',
    ordered: 'text',
  },
};

/** The SQL type of a column kind in a dialect. */
export function columnType(dialect: SqlDialectName, kind: ColumnKind): RawBuilder<unknown> {
  return sql.raw(TYPES[dialect][kind]);
}
