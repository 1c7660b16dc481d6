import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { CairnError } from '@cairn/core';
import { CAIRN_MIGRATION_NAMES, createKyselyStore, migrateToLatest } from '../../src/index.js';
import { keyHash } from '../../src/codec/text.js';
import { type STEP_COLUMNS_0001, tableNames } from '../../src/schema/tables.js';
import { dropPrefix } from './harness.js';
import { prefixedMigrator } from './prefixed-migrator.js';
import type { Target } from './targets.js';

const T0 = 1_750_000_000_000;

const saysMigrate = (error: unknown) =>
  CairnError.is(error, 'STORE_ERROR') && /run Cairn's migrations/.test((error as Error).message) && /cairn_0003_step_turn/.test((error as Error).message);

/**
 * `cairn_0003_step_turn` on a database that already ran `cairn_0002_step_routines`: the store
 * refuses to write or read steps until it runs (saying so), the steps written before keep their
 * data and have no `turn`, and down restores 0002 so that up runs again.
 * Registered inside `storeCases`, whose `before` sets the target up.
 */
export function stepTurnMigrationCase(target: Target): void {
  it('cairn_0003_step_turn upgrades a database at cairn_0002_step_routines; the steps it held keep their data, without turn; down and up again', async () => {
    const db = await target.open();
    const { prefix, migrator } = prefixedMigrator(db);
    try {
      assert.equal((await migrator.migrateTo(CAIRN_MIGRATION_NAMES[1])).error, undefined);
      const store = createKyselyStore({ db, tablePrefix: prefix });
      const { run } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null }, T0);
      const claimed = await store.runs.claim(run.id, 'w1', 30_000, T0);
      assert.ok(claimed);
      // Not migrated yet: step reads and writes fail, say what to do, and write nothing.
      await assert.rejects(
        store.steps.insert(run.id, claimed.fence, { key: 'n', name: 'n', kind: 'task', seq: 9, status: 'running', maxAttempts: 1, worker: 'w1' }, T0),
        saysMigrate,
      );
      await assert.rejects(store.steps.load(run.id), saysMigrate);
      // A step as a release before 0003 wrote it: the columns of 0001, nothing else.
      const old: Record<(typeof STEP_COLUMNS_0001)[number], string | number | null> = {
        run_id: run.id,
        key_hash: keyHash('old'),
        step_key: 'old',
        name: 'old',
        kind: 'task',
        seq: 0,
        status: 'succeeded',
        attempt: 1,
        max_attempts: 3,
        queued: 1,
        output_json: '{"v":1}',
        error_json: null,
        wake_at: null,
        child_run_id: null,
        created_at: T0,
        updated_at: T0,
      };
      await db
        .insertInto(tableNames(prefix).steps as never)
        .values(old as never)
        .execute();

      const up = await migrator.migrateTo(CAIRN_MIGRATION_NAMES[2]);
      assert.equal(up.error, undefined, `migration failed: ${String(up.error)}`);
      assert.deepEqual(
        up.results?.map((r) => [r.migrationName, r.status]),
        [[CAIRN_MIGRATION_NAMES[2], 'Success']],
      );
      // This release's store also needs the later migrations (cairn_0008_step_finished adds a step
      // column); they leave the steps 0003 upgraded as they are.
      assert.equal((await migrator.migrateToLatest()).error, undefined);
      const [loaded] = await store.steps.load(run.id);
      assert.deepEqual(loaded, {
        runId: run.id,
        key: 'old',
        name: 'old',
        kind: 'task',
        seq: 0,
        status: 'succeeded',
        attempt: 1,
        maxAttempts: 3,
        queued: true,
        output: { v: 1 },
        createdAt: T0,
        updatedAt: T0,
      });
      assert.equal('turn' in loaded!, false);
      const marked = await store.steps.transition(
        run.id,
        claimed.fence,
        { key: 'old', from: { status: ['succeeded'], attempt: 1 }, to: { status: 'succeeded', turn: 4 } },
        T0 + 1,
      );
      assert.deepEqual([marked.turn, marked.output], [4, { v: 1 }]);
      await store.steps.insert(
        run.id,
        claimed.fence,
        { key: 'new', name: 'new', kind: 'task', seq: 1, status: 'succeeded', maxAttempts: 1, output: 2, turn: 9_007_199_254_740_991 },
        T0,
      );
      assert.deepEqual(
        (await store.steps.load(run.id)).map((s) => [s.key, s.turn]),
        [
          ['old', 4],
          ['new', 9_007_199_254_740_991],
        ],
      );

      // Down: back to 0002 (the column and the new routines go); the store says to migrate again.
      const down = await migrator.migrateTo(CAIRN_MIGRATION_NAMES[1]);
      assert.equal(down.error, undefined, `migration failed: ${String(down.error)}`);
      assert.deepEqual(down.results?.map((r) => [r.migrationName, r.direction, r.status]).at(-1), [CAIRN_MIGRATION_NAMES[2], 'Down', 'Success']);
      assert.equal(down.error, undefined);
      await assert.rejects(store.steps.load(run.id), saysMigrate);
      await assert.rejects(
        store.steps.transition(
          run.id,
          claimed.fence,
          { key: 'new', from: { status: ['succeeded'], attempt: 1 }, to: { status: 'succeeded', turn: 1 } },
          T0 + 2,
        ),
        saysMigrate,
      );
      // And up again: the steps are there, their turns are not (the column was dropped).
      await migrateToLatest(db, { tablePrefix: prefix });
      assert.deepEqual(
        (await store.steps.load(run.id)).map((s) => [s.key, s.output, 'turn' in s]),
        [
          ['old', { v: 1 }, false],
          ['new', 2, false],
        ],
      );
      const again = await store.steps.transition(
        run.id,
        claimed.fence,
        { key: 'new', from: { status: ['succeeded'], attempt: 1 }, to: { status: 'succeeded', turn: 1 } },
        T0 + 3,
      );
      assert.equal(again.turn, 1);
    } finally {
      await dropPrefix(db, prefix);
      await db.destroy();
    }
  });
}
