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
