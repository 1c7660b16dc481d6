import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { CAIRN_MIGRATION_NAMES, createKyselyStore } from '../../src/index.js';
import { dropPrefix } from './harness.js';
import { prefixedMigrator } from './prefixed-migrator.js';
import type { Target } from './targets.js';

const T0 = 1_750_000_000_000;

/**
 * `cairn_0004_run_deadline` on a database at `cairn_0003_step_turn`: runs written before keep
 * their data and read back without `deadline` / `cancelReason`; afterwards both are stored (on
 * MySQL/MariaDB through the replaced `run_request_cancel` procedure); down restores 0003 (a run
 * without a deadline can still be created) and up runs again. Registered inside `storeCases`.
 */
export function runDeadlineMigrationCase(target: Target): void {
  it('cairn_0004_run_deadline upgrades a database at cairn_0003_step_turn; old runs have no deadline or reason; down and up again', async () => {
    const db = await target.open();
    const { prefix, migrator } = prefixedMigrator(db);
    try {
      assert.equal((await migrator.migrateTo(CAIRN_MIGRATION_NAMES[2])).error, undefined);
      const store = createKyselyStore({ db, tablePrefix: prefix });
      const { run: old } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: { a: 1 } }, T0);

      const up = await migrator.migrateTo(CAIRN_MIGRATION_NAMES[3]);
      assert.equal(up.error, undefined, `migration failed: ${String(up.error)}`);
      assert.deepEqual(
        up.results?.map((r) => [r.migrationName, r.status]),
        [[CAIRN_MIGRATION_NAMES[3], 'Success']],
      );
      const before = await store.runs.get(old.id);
      assert.deepEqual([before?.input, 'deadline' in before!, 'cancelReason' in before!], [{ a: 1 }, false, false]);
      const cancelled = await store.runs.requestCancel(old.id, T0 + 1, 'upgraded ✓');
      assert.deepEqual([cancelled?.cancelRequested, cancelled?.cancelReason], [true, 'upgraded ✓']);
      assert.equal((await store.runs.requestCancel(old.id, T0 + 2, 'again'))?.cancelReason, 'upgraded ✓', 'the first reason is kept');
      const { run: timed } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null, deadline: T0 + 60_000 }, T0);
      assert.equal((await store.runs.get(timed.id))?.deadline, T0 + 60_000);

      const down = await migrator.migrateDown();
      assert.equal(down.error, undefined, `migration failed: ${String(down.error)}`);
      assert.deepEqual(
        down.results?.map((r) => [r.migrationName, r.direction, r.status]),
        [[CAIRN_MIGRATION_NAMES[3], 'Down', 'Success']],
      );
      const after = await store.runs.get(timed.id);
      assert.deepEqual([after?.input, 'deadline' in after!], [null, false]);
      const { created } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null }, T0);
      assert.equal(created, true, 'a run without a deadline is created at 0003');

      await migrator.migrateTo(CAIRN_MIGRATION_NAMES[3]);
      const { run: again } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null, deadline: T0 + 1 }, T0);
      assert.equal((await store.runs.get(again.id))?.deadline, T0 + 1);
      assert.equal((await store.runs.requestCancel(again.id, T0 + 1, 'why'))?.cancelReason, 'why');
    } finally {
      await dropPrefix(db, prefix);
      await db.destroy();
    }
  });
}
