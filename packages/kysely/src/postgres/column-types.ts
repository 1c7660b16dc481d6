import type { ColumnKind } from '../schema/column-types.js';

// Identifiers compare bytewise (COLLATE "C"), so ordering matches the reference store. `ordered` is
// text of any length that queries sort by (slot waiters' holders), never indexed.
/** PostgreSQL's type of each column kind. */
export const postgresColumnTypes: Readonly<Record<ColumnKind, string>> = {
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
};
