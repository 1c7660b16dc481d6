import { randomUUID } from 'node:crypto';
import { Migrator } from 'kysely/migration';
import { cairnMigrations } from '../../src/index.js';
import type { AnyKysely } from '../../src/dialect/types.js';

/**
 * A Migrator over Cairn's migrations with a fresh table prefix, so an upgrade test can walk the
 * migrations one by one (migrateTo a name) on a database that other tests share.
 */
export function prefixedMigrator(db: AnyKysely): { prefix: string; migrator: Migrator } {
  const prefix = `t${randomUUID().slice(0, 8)}_`;
  const migrator = new Migrator({
    db,
    provider: cairnMigrations({ tablePrefix: prefix }),
    migrationTableName: `${prefix}migrations`,
    migrationLockTableName: `${prefix}migrations_lock`,
  });
  return { prefix, migrator };
}
