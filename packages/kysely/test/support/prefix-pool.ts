import { sql } from 'kysely';
import { TABLES, migrateToLatest, tableNames } from '../../src/index.js';
import type { AnyDb } from './databases.js';

/**
 * Empties every store table of `prefix` (deletes every row) and keeps the schema: tables,
 * indexes, stored routines and the migrator's own record. The store's tables have no
 * auto-increment column, sequence or foreign key, so an emptied prefix is what a fresh migration
 * makes (`prefix-pool.test.ts` compares the two on each server).
 */
export async function emptyPrefix(db: AnyDb, prefix: string): Promise<void> {
  const names = tableNames(prefix);
  for (const table of TABLES) await sql`delete from ${sql.table(names[table])}`.execute(db);
}

/** Migrated table prefixes on one database, handed out one per namespace and reused once emptied. */
export interface PrefixPool {
  /** The prefix of `namespace`: migrated, empty on first use; the same one for every peer. */
  prefixOf(namespace: string): Promise<string>;
  /** The prefix `namespace` holds now; throws when it holds none (never hands out a new one). */
  heldBy(namespace: string): Promise<string>;
  /** Empties `namespace`'s prefix and keeps it for the next namespace. */
  release(namespace: string): Promise<void>;
}

/**
 * A pool of migrated prefixes on the database of `db` (the conformance harness's administrative
 * connection). Migrating a prefix costs 0.4 s on PostgreSQL and 1–3 s on MariaDB (tables,
 * indexes and stored routines; measured under load), and every conformance case wants an empty
 * one: a prefix whose case has ended is emptied and given to the next case instead of dropped
 * and created again. A prefix whose case did not end cleanly (its store failed to close) is
 * simply not reused.
 */
export function prefixPool(db: AnyDb): PrefixPool {
  const spare: string[] = [];
  const held = new Map<string, Promise<string>>();
  return {
    prefixOf(namespace) {
      let prefix = held.get(namespace);
      if (!prefix) {
        const reused = spare.pop();
        const fresh = `${namespace}_`;
        prefix = reused !== undefined ? Promise.resolve(reused) : migrateToLatest(db, { tablePrefix: fresh }).then(() => fresh);
        held.set(namespace, prefix);
      }
      return prefix;
    },
    heldBy(namespace) {
      const prefix = held.get(namespace);
      if (!prefix) throw new Error(`namespace ${namespace} holds no table prefix`);
      return prefix;
    },
    async release(namespace) {
      const prefix = held.get(namespace);
      if (!prefix) return;
      held.delete(namespace);
      const name = await prefix;
      await emptyPrefix(db, name);
      spare.push(name);
    },
  };
}
