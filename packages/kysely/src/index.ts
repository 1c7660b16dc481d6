export { createKyselyStore } from './store.js';
export type { KyselyStoreOptions } from './store.js';
export { openSqliteStore } from './sqlite/open-store.js';
export type { SqliteStoreOptions } from './sqlite/open-store.js';
export { cairnMigrations, migrateToLatest, CAIRN_MIGRATION_NAMES } from './schema/migrations.js';
export type { CairnMigrationOptions } from './schema/migrations.js';
export type { CairnMigration, CairnMigrationProvider, CairnMigrationResult, CairnMigrationResultSet } from './schema/migration-types.js';
export { detectDialect } from './dialect/detect.js';
export type { SqlDialectName } from './dialect/types.js';
export { tableNames, TABLES } from './schema/tables.js';
export type { TableName, TableNames } from './schema/tables.js';
// openPostgresStore / guardPostgresPool live in `@cairn/kysely/postgres`, openMysqlStore /
// guardMysqlPool in `@cairn/kysely/mysql`: each needs its driver's types, which a project on
// another dialect does not install.
export type { ServerStoreOptions } from './server-stores.js';
export type { ConnectionErrorHandler } from './connection-guards.js';
