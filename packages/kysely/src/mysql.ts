// Entry point `@cairn/kysely/mysql`: what needs the `mysql2` driver's types, kept out of the main
// entry so a project on SQLite or PostgreSQL type-checks without `mysql2` installed. The code is in mysql/.
export { guardMysqlPool } from './mysql/pool-guard.js';
export { openMysqlStore } from './mysql/open-store.js';
export type { ConnectionErrorHandler } from './connection-guards.js';
export type { ServerStoreOptions } from './server-stores.js';
