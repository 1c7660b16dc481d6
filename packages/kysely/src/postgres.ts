// Entry point `@cairn/kysely/postgres`: what needs the `pg` driver's types, kept out of the main
// entry so a project on SQLite or MySQL type-checks without `pg` installed. The code is in postgres/.
export { guardPostgresPool } from './postgres/pool-guard.js';
export { openPostgresStore } from './postgres/open-store.js';
export { createPostgresSignals } from './postgres/postgres-signals.js';
export type { PostgresSignals, PostgresSignalsOptions } from './postgres/postgres-signals.js';
export type { ConnectionErrorHandler } from './connection-guards.js';
export type { ServerStoreOptions } from './server-stores.js';
