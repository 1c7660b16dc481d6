import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { CAIRN_MIGRATION_NAMES, createKyselyStore } from '../../src/index.js';
import { dropPrefix } from './harness.js';
import { prefixedMigrator } from './prefixed-migrator.js';
import type { Target } from './targets.js';

const T0 = 1_750_000_000_000;

/**
 * `cairn_0006_operations` on a database at `cairn_0005_event_messages`: runs written before keep
 * their data and read back without `forkedFrom` / `retries`; afterwards a failed old run can be
 * reopened, forks are stored, children listed by parent and ended runs listed; down drops the
 * columns and indexes (a run can still be created) and up runs again. Registered inside `storeCases`.
 */
export function operationsMigrationCase(target: Target): void {
  it('cairn_0006_operations upgrades a database at cairn_0005_event_messages; old runs have no fork or retries; down and up again', async () => {
    const db = await target.open();
    const { prefix, migrator } = prefixedMigrator(db);
    try {
      assert.equal((await migrator.migrateTo(CAIRN_MIGRATION_NAMES[4])).error, undefined);
      const store = createKyselyStore({ db, tablePrefix: prefix });
      const { run: old } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: { a: 1 } }, T0);
      const { run: kid } = await store.runs.create(
        { id: randomUUID(), workflow: 'kid', version: 'v1', input: null, parent: { runId: old.id, stepKey: 'k' } },
        T0 + 1,
      );
      const claimed = await store.runs.claim(old.id, 'w', 30_000, T0);
      assert.ok(claimed);
      await store.runs.transition(old.id, claimed.fence, { from: ['running'], to: 'failed', error: { name: 'Error', message: 'old' } }, T0 + 2);

      const up = await migrator.migrateTo(CAIRN_MIGRATION_NAMES[5]);
      assert.equal(up.error, undefined, `migration failed: ${String(up.error)}`);
      assert.deepEqual(
        up.results?.map((r) => [r.migrationName, r.status]),
        [[CAIRN_MIGRATION_NAMES[5], 'Success']],
      );
      const before = await store.runs.get(old.id);
      assert.deepEqual([before?.input, 'forkedFrom' in before!, 'retries' in before!], [{ a: 1 }, false, false]);
      assert.deepEqual(
        (await store.runs.list({ parentRunId: old.id })).runs.map((r) => r.id),
        [kid.id],
      );
      assert.deepEqual(
        (await store.runs.listEnded({ status: 'failed', updatedBefore: T0 + 10, limit: 10 })).runs.map((r) => r.id),
        [old.id],
      );
      const reopened = await store.runs.reopen(
        old.id,
        { fence: claimed.fence, forget: [], retry: { at: T0 + 3, previousStatus: 'failed', forgottenSteps: [] } },
        T0 + 3,
      );
      assert.deepEqual([reopened.status, reopened.retries?.length], ['pending', 1]);
      const { run: fork } = await store.runs.create(
        { id: randomUUID(), workflow: 'wf', version: 'v1', input: null, forkedFrom: { runId: old.id, stepKey: 's' } },
        T0 + 4,
      );
      assert.deepEqual((await store.runs.get(fork.id))?.forkedFrom, { runId: old.id, stepKey: 's' });

      const down = await migrator.migrateDown();
      assert.equal(down.error, undefined, `migration failed: ${String(down.error)}`);
      assert.deepEqual(
        down.results?.map((r) => [r.migrationName, r.direction, r.status]),
        [[CAIRN_MIGRATION_NAMES[5], 'Down', 'Success']],
      );
      const after = await store.runs.get(old.id);
      assert.deepEqual([after?.input, 'retries' in after!], [{ a: 1 }, false]);
      const { created } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null }, T0);
      assert.equal(created, true, 'a run that is no fork is created at 0005');

      assert.equal((await migrator.migrateTo(CAIRN_MIGRATION_NAMES[5])).error, undefined);
      assert.deepEqual(
        (await store.runs.list({ parentRunId: old.id })).runs.map((r) => r.id),
        [kid.id],
      );
    } finally {
      await dropPrefix(db, prefix);
      await db.destroy();
    }
  });
}
