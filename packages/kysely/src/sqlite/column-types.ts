import type { ColumnKind } from '../schema/column-types.js';

// TEXT compares bytewise already; every integer is INTEGER (64-bit).
/** SQLite's type of each column kind. */
export const sqliteColumnTypes: Readonly<Record<ColumnKind, string>> = {
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
};
