/**
 * The conformance harness reuses table prefixes on the servers (support/prefix-pool.ts): a case's
 * prefix is emptied when it ends and given to the next case. This shows that an emptied prefix is
 * what a fresh migration makes: the same columns, indexes, routines and migration record (the
 * prefix's name aside), no rows, and no counter left behind; and that the pool hands a prefix to
 * one namespace at a time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { stopSharedServices } from '@cairn/conformance/services';
import { TABLES, createKyselyStore, migrateToLatest, tableNames } from '../src/index.js';
import type { AnyDb } from './support/databases.js';
import { exerciseEveryMethod } from './support/exercise.js';
import { emptyPrefix, prefixPool } from './support/prefix-pool.js';
import { freshPrefix, serverTarget } from './support/targets.js';

after(() => stopSharedServices());

/** Every fact of the schema under `prefix` that a store could depend on, with the prefix written `<p>`. */
async function describeSchema(db: AnyDb, dialect: 'postgres' | 'mysql', prefix: string): Promise<string[]> {
  const like = `${prefix.replace(/_/g, '\\_')}%`;
  const queries =
    dialect === 'mysql'
      ? [
          sql`select table_name, column_name, ordinal_position, column_type, is_nullable, column_default, extra from information_schema.columns where table_schema = database() and table_name like ${like}`,
          sql`select table_name, index_name, seq_in_index, column_name, non_unique, sub_part from information_schema.statistics where table_schema = database() and table_name like ${like}`,
          sql`select table_name, auto_increment, engine, table_collation from information_schema.tables where table_schema = database() and table_name like ${like}`,
          sql`select routine_name, routine_type, routine_definition from information_schema.routines where routine_schema = database() and routine_name like ${like}`,
          sql`select trigger_name, action_statement from information_schema.triggers where trigger_schema = database() and trigger_name like ${like}`,
        ]
      : [
          sql`select table_name, column_name, ordinal_position, data_type, is_nullable, column_default from information_schema.columns where table_schema = current_schema() and table_name like ${like}`,
          sql`select tablename, indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename like ${like}`,
          sql`select p.proname, pg_get_functiondef(p.oid) as def from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = current_schema() and p.proname like ${like}`,
          sql`select sequence_name from information_schema.sequences where sequence_schema = current_schema() and sequence_name like ${like}`,
          sql`select trigger_name, action_statement from information_schema.triggers where trigger_schema = current_schema() and trigger_name like ${like}`,
        ];
  const facts: string[] = [];
  for (const query of queries) {
    const { rows } = await query.execute(db);
    for (const row of rows) facts.push(JSON.stringify(row).split(prefix).join('<p>'));
  }
  const names = tableNames(prefix);
  for (const table of TABLES) {
    const { rows } = await sql<{ n: unknown }>`select count(*) as n from ${sql.table(names[table])}`.execute(db);
    facts.push(`${table}: ${Number(rows[0]?.n)} rows`);
  }
  const { rows: migrations } = await sql<{ name: string }>`select name from ${sql.table(`${prefix}migrations`)} order by name`.execute(db);
  facts.push(`migrations: ${migrations.map((m) => m.name).join(', ')}`);
  return facts.sort();
}

// Both servers first: a suite registered after the first one ran would find the services stopped.
const targets = [await serverTarget('postgres'), await serverTarget('mysql')];
for (const target of targets) {
  const dialect = target.dialect as 'postgres' | 'mysql';
  describe(`a reused table prefix on ${dialect}`, { skip: target.skip === undefined ? false : `no ${dialect} server: ${target.skip}` }, () => {
    let db: AnyDb;
    before(async () => {
      await target.setup();
      db = await target.open();
    });
    after(async () => {
      await db?.destroy();
      await target.teardown();
    });

    it('emptied after every store method ran on it, it is what a fresh migration makes', async () => {
      const fresh = freshPrefix();
      await migrateToLatest(db, { tablePrefix: fresh });
      const used = freshPrefix();
      await migrateToLatest(db, { tablePrefix: used });
      const store = createKyselyStore({ db: await target.open(), tablePrefix: used, ownsDb: true });
      await exerciseEveryMethod(store);
      await store.close();
      const dirty = await describeSchema(db, dialect, used);
      // The control: the workload left rows, so emptying has something to do.
      assert.ok(
        dirty.some((f) => /^runs: [1-9]/.test(f)),
        dirty.filter((f) => f.includes('rows')).join('\n'),
      );
      await emptyPrefix(db, used);
      assert.deepEqual(await describeSchema(db, dialect, used), await describeSchema(db, dialect, fresh));
    });

    it('the pool gives each namespace its own prefix, the same one to its peers, and an emptied one to the next', async () => {
      const pool = prefixPool(db);
      const a = await pool.prefixOf('pool_a');
      const b = await pool.prefixOf('pool_b');
      assert.notEqual(a, b);
      assert.equal(await pool.prefixOf('pool_a'), a);
      assert.equal(await pool.heldBy('pool_a'), a);
      const store = createKyselyStore({ db: await target.open(), tablePrefix: a, ownsDb: true });
      await store.runs.create({ id: 'r1', workflow: 'w', version: 'v1', input: 1 }, 1);
      await store.close();
      await pool.release('pool_a');
      assert.throws(() => pool.heldBy('pool_a'), /holds no table prefix/);
      // The next namespace gets a's prefix, empty: the run created there is gone.
      const c = await pool.prefixOf('pool_c');
      assert.equal(c, a);
      const reopened = createKyselyStore({ db: await target.open(), tablePrefix: c, ownsDb: true });
      assert.equal(await reopened.runs.get('r1'), undefined);
      assert.deepEqual((await reopened.runs.list({})).runs, []);
      await reopened.close();
      // b is still held: a new namespace gets a new prefix.
      assert.notEqual(await pool.prefixOf('pool_d'), b);
    });
  });
}
