import { hash } from 'node:crypto';

/**
 * The SQL text of a routine call as a named (prepared) statement for the `pg` driver: Kysely's
 * PostgreSQL connection hands a compiled query's `sql` to `pg`'s `client.query` as it is, and `pg`
 * takes an object `{ name, text }` there as a named statement — parsed and planned once per
 * connection, then only bound and executed (the server skips parse, analysis and planning of the
 * call on every later use). The name is derived from the text, so one text is always one name and
 * two texts never share one. Only for Kysely's `PostgresDialect` over `pg` (or a pool with its
 * query API): see `KyselyStoreOptions.preparedStatements`.
 */
export function namedStatement(text: string): string {
  const statement = { name: `cairn_${hash('sha256', text, 'hex').slice(0, 24)}`, text };
  // Typed as the string Kysely's CompiledQuery declares; `pg` reads the object.
  return statement as unknown as string;
}

/**
 * PostgreSQL refused a named statement before running it: `26000` (invalid_sql_statement_name: the
 * server connection does not have it, though `pg` parsed it on this client) or `42P05`
 * (duplicate_prepared_statement: the server connection has one of that name from another client).
 * Both happen behind a pooler in transaction mode that does not track prepared statements
 * (PgBouncer before 1.21, or without `max_prepared_statements`).
 */
export function lostNamedStatement(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '26000' || code === '42P05';
}
