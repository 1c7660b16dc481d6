import type { ColumnKind } from '../schema/column-types.js';

// Lengths bound index sizes (utf8mb4: 4 bytes a character, 3072 bytes a key); JSON needs LONGTEXT
// (TEXT stops at 64 KiB).
/** MySQL/MariaDB's type of each column kind. */
export const mysqlColumnTypes: Readonly<Record<ColumnKind, string>> = {
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
};
