/**
 * The kinds of column the schema uses; each dialect maps them to its types (`dialect.schema.columnType`,
 * the tables in `postgres/`, `mysql/`, `sqlite/column-types.ts`).
 */
export type ColumnKind = 'id' | 'name' | 'hash' | 'short' | 'text' | 'json' | 'bigint' | 'int' | 'flag' | 'ordered';
