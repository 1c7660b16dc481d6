import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { sql } from 'kysely';
import { CAIRN_MIGRATION_NAMES, createKyselyStore, tableNames } from '../../src/index.js';
import { dropPrefix } from './harness.js';
import { prefixedMigrator } from './prefixed-migrator.js';
import type { Target } from './targets.js';

const T0 = 1_750_000_000_000;

/**
 * `cairn_0005_event_messages` on a database at `cairn_0004_run_deadline`: an event stored before
 * becomes message 1 of its name, later sends are numbered on and idempotency keys work; down keeps
 * message 1 of each name in the old shape, and up runs again. Registered inside `storeCases`.
 */
export function eventMessagesMigrationCase(target: Target): void {
  it('cairn_0005_event_messages upgrades a database at cairn_0004_run_deadline; stored events become message 1; down and up again', async () => {
    const db = await target.open();
    const { prefix, migrator } = prefixedMigrator(db);
    const names = tableNames(prefix);
    try {
      assert.equal((await migrator.migrateTo(CAIRN_MIGRATION_NAMES[3])).error, undefined);
      const store = createKyselyStore({ db, tablePrefix: prefix });
      const { run } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null }, T0);
      // An event as a release before 0005 wrote it: the columns of 0001.
      await sql`insert into ${sql.table(names.events)} (run_id, name_hash, name, payload_json, delivered_at)
        values (${run.id}, ${'a'.repeat(64)}, ${'approved'}, ${'{"by":"old"}'}, ${T0})`.execute(db);

      // Up to 0005 exactly (later migrations are not what this case is about).
      const up = await migrator.migrateTo(CAIRN_MIGRATION_NAMES[4]);
      assert.equal(up.error, undefined, `migration failed: ${String(up.error)}`);
      assert.deepEqual(
        up.results?.map((r) => [r.migrationName, r.status]),
        [[CAIRN_MIGRATION_NAMES[4], 'Success']],
      );
      // The hash above is not the store's hash of the name: read the row back as the store numbered it.
      const { rows } = await sql<{ seq: unknown; name: string }>`select seq, name from ${sql.table(names.events)} where run_id = ${run.id}`.execute(db);
      assert.deepEqual(
        rows.map((r) => [Number(r.seq), r.name]),
        [[1, 'approved']],
      );
      assert.deepEqual(await store.events.deliver(run.id, 'msg', 1, T0 + 1), { delivered: true, duplicate: false, seq: 1 });
      assert.deepEqual(await store.events.deliver(run.id, 'msg', 2, T0 + 2, { idempotencyKey: 'k' }), { delivered: true, duplicate: false, seq: 2 });
      assert.deepEqual(await store.events.deliver(run.id, 'msg', 3, T0 + 3, { idempotencyKey: 'k' }), { delivered: false, duplicate: true, seq: 2 });

      const down = await migrator.migrateDown();
      assert.equal(down.error, undefined, `migration failed: ${String(down.error)}`);
      assert.deepEqual(
        down.results?.map((r) => [r.migrationName, r.direction, r.status]),
        [[CAIRN_MIGRATION_NAMES[4], 'Down', 'Success']],
      );
      const { rows: old } = await sql<{
        name: string;
        payload_json: string;
      }>`select name, payload_json from ${sql.table(names.events)} where run_id = ${run.id} order by name`.execute(db);
      assert.deepEqual(
        old.map((r) => [r.name, r.payload_json]),
        [
          ['approved', '{"by":"old"}'],
          ['msg', '1'],
        ],
        'message 1 of each name is kept',
      );

      await migrator.migrateTo(CAIRN_MIGRATION_NAMES[4]);
      assert.deepEqual((await store.events.get(run.id, 'msg', 1))?.payload, 1);
      assert.deepEqual(await store.events.deliver(run.id, 'msg', 'again', T0 + 4, { idempotencyKey: 'k' }), { delivered: true, duplicate: false, seq: 2 });
    } finally {
      await dropPrefix(db, prefix);
      await db.destroy();
    }
  });
}
