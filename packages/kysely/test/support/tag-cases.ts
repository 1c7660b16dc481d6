import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { CAIRN_MIGRATION_NAMES } from '../../src/index.js';
import { atMigrationBefore, downByOne, upByOne } from './migration-upgrade.js';
import type { Target } from './targets.js';

const T0 = 1_750_000_000_000;
const MIGRATION = 'cairn_0017_run_tags';

/**
 * The SQL-specific tag case (the contract itself is the conformance group `store.tags`):
 * `cairn_0017_run_tags` on a database at the migration before it: runs made before keep their data
 * and have no tags, runs get and list as before, tags are kept and found from then on; down lists
 * the runs again without tags; up again. Registered inside `storeCases`.
 */
export function tagCases(target: Target): void {
  it(`${MIGRATION} upgrades a database at the migration before it; old runs have no tags and take tag writes; down and up again`, async () => {
    await atMigrationBefore(target, MIGRATION, async (world) => {
      const { migrator, store, index } = world;
      const { run: old } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: { a: 1 } }, T0);
      await upByOne(world, MIGRATION);
      const before = await store.runs.get(old.id);
      assert.deepEqual([before?.input, 'tags' in before!, 'tagWrites' in before!], [{ a: 1 }, false, false]);
      const claimed = await store.runs.claim(old.id, 'w', 30_000, T0);
      assert.deepEqual(await store.runs.setTags!(old.id, claimed!.fence, { seq: 0, tags: { customer: 'c-1' } }, T0), { applied: true });
      const { run: tagged } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null, tags: { customer: 'c-1' } }, T0 + 1);
      assert.deepEqual(
        (await store.runs.list({ tags: { customer: 'c-1' } })).runs.map((r) => r.id),
        [tagged.id, old.id],
      );

      await downByOne(world, MIGRATION);
      assert.deepEqual(
        (await store.runs.list({ limit: 10 })).runs.map((r) => 'tags' in r),
        [false, false],
        'a database before it still lists its runs',
      );
      assert.equal((await store.runs.get(old.id))?.status, 'running');

      assert.equal((await migrator.migrateTo(CAIRN_MIGRATION_NAMES[index]!)).error, undefined);
      const { run: again } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null, tags: { customer: 'c-2' } }, T0);
      assert.deepEqual(
        (await store.runs.list({ tags: { customer: 'c-2' } })).runs.map((r) => r.id),
        [again.id],
      );
    });
  });
}
