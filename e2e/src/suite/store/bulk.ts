import assert from 'node:assert/strict';
import type { BulkOperationRecord, BulkStore, WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { HOSTILE_NAMES } from '../fixtures/hostile-strings.js';
import { uuidv7 } from '../fixtures/uuid-v7.js';

// Cases of this group require `bulk`: the runner skips them on a store without it.
const bulkOf = (store: WorkflowStore): BulkStore => store.bulk as BulkStore;

function operation(id: string, t0: number, over: Partial<BulkOperationRecord> = {}): BulkOperationRecord {
  return {
    id,
    revision: 1,
    action: 'cancel',
    filter: { workflow: 'order', status: ['pending', 'waiting'], createdAfter: t0 - 1000, createdBefore: t0 },
    reason: 'customer asked',
    state: 'running',
    pages: 0,
    counts: { matched: 0, done: 0, skipped: 0, failed: 0 },
    failures: [],
    owner: { id: 'worker-a/1', expiresAt: t0 + 30_000 },
    createdAt: t0,
    updatedAt: t0,
    ...over,
  };
}

/** The bulk operation contract (`WorkflowStore.bulk`): records kept as given, changed by compare-and-set only. */
export const bulkGroup: CaseGroup = caseGroup('store.bulk', 'store: bulk operation records', [
  conformanceCase(
    'create keeps the record as given at revision 1; a second create of the id writes nothing',
    async ({ store, t0 }) => {
      const id = uuidv7();
      const first = await bulkOf(store).create(operation(id, t0, { revision: 7 }));
      assert.equal(first.created, true);
      assert.deepEqual(first.operation, operation(id, t0));
      assert.deepEqual(await bulkOf(store).get(id), operation(id, t0));
      const again = await bulkOf(store).create(operation(id, t0 + 5, { action: 'delete' }));
      assert.equal(again.created, false);
      assert.deepEqual(again.operation, operation(id, t0), 'the stored record, unchanged');
      assert.equal(await bulkOf(store).get(uuidv7()), undefined);
    },
    { requires: ['bulk'] },
  ),

  conformanceCase(
    'update is a compare-and-set on revision: a stale revision writes nothing; of 8 racing updates exactly one lands',
    async ({ store, t0 }) => {
      const id = uuidv7();
      await bulkOf(store).create(operation(id, t0));
      const next = operation(id, t0, { cursor: 'opaque-cursor', pages: 1, counts: { matched: 3, done: 2, skipped: 1, failed: 0 }, updatedAt: t0 + 1 });
      const written = await bulkOf(store).update(next, 1);
      assert.deepEqual(written, { ...next, revision: 2 });
      assert.equal(await bulkOf(store).update(operation(id, t0, { pages: 9 }), 1), undefined, 'revision 1 is stale');
      assert.deepEqual(await bulkOf(store).get(id), { ...next, revision: 2 }, 'the stale update wrote nothing');
      const racers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => bulkOf(store).update(operation(id, t0, { pages: 10 + i, owner: { id: `w${i}`, expiresAt: t0 } }), 2)),
      );
      const landed = racers.filter((r) => r !== undefined);
      assert.equal(landed.length, 1, 'exactly one racing update lands');
      assert.deepEqual(await bulkOf(store).get(id), landed[0]);
      assert.equal(landed[0]!.revision, 3);
      const unknownId = uuidv7();
      assert.equal(await bulkOf(store).update(operation(unknownId, t0), 1), undefined, 'an unknown id is not created');
      assert.equal(await bulkOf(store).get(unknownId), undefined);
    },
    { requires: ['bulk'] },
  ),

  conformanceCase(
    'a record without cursor, owner and reason comes back without them; completed records keep their counts and failures',
    async ({ store, t0 }) => {
      const id = uuidv7();
      const { cursor: _c, owner: _o, reason: _r, ...bare } = operation(id, t0);
      await bulkOf(store).create(bare);
      const done: BulkOperationRecord = {
        ...bare,
        state: 'completed',
        pages: 3,
        counts: { matched: 5, done: 3, skipped: 1, failed: 1 },
        failures: [{ runId: 'r-1', code: 'RUN_CONFLICT', message: 'compensated' }],
      };
      await bulkOf(store).update(done, 1);
      const read = await bulkOf(store).get(id);
      assert.deepEqual(read, { ...done, revision: 2 });
      assert.ok(read && !('cursor' in read) && !('owner' in read) && !('reason' in read), 'absent fields stay absent');
    },
    { requires: ['bulk'] },
  ),

  conformanceCase(
    'list is newest first by id, limited, and pages by the last id with before; delete removes one record',
    async ({ store, t0 }) => {
      const ids = Array.from({ length: 5 }, () => uuidv7());
      // Created out of order: the list orders by id, not by insertion.
      for (const i of [2, 0, 4, 1, 3]) await bulkOf(store).create(operation(ids[i]!, t0 + i));
      const newest = [...ids].reverse();
      assert.deepEqual(
        (await bulkOf(store).list({ limit: 100 })).map((o) => o.id),
        newest,
      );
      const first = await bulkOf(store).list({ limit: 2 });
      assert.deepEqual(
        first.map((o) => o.id),
        newest.slice(0, 2),
      );
      const rest = await bulkOf(store).list({ limit: 100, before: first[1]!.id });
      assert.deepEqual(
        rest.map((o) => o.id),
        newest.slice(2),
      );
      assert.deepEqual(rest[0], operation(ids[2]!, t0 + 2), 'listed records are whole');
      assert.equal(await bulkOf(store).delete(ids[2]!), true);
      assert.equal(await bulkOf(store).delete(ids[2]!), false);
      assert.equal(await bulkOf(store).get(ids[2]!), undefined);
      assert.deepEqual(
        (await bulkOf(store).list({ limit: 100 })).map((o) => o.id),
        newest.filter((id) => id !== ids[2]),
      );
    },
    { requires: ['bulk'] },
  ),

  conformanceCase(
    'hostile strings in the filter, reason and failures round-trip byte for byte',
    async ({ store, t0 }) => {
      for (const name of HOSTILE_NAMES) {
        const id = uuidv7();
        const record = operation(id, t0, {
          filter: { workflow: name, version: name, errorCode: name },
          reason: name,
          cursor: name,
          failures: [{ runId: name, code: name, message: name }],
        });
        await bulkOf(store).create(record);
        assert.deepEqual(await bulkOf(store).get(id), record, `hostile ${JSON.stringify(name).slice(0, 40)}`);
      }
    },
    { requires: ['bulk'] },
  ),
]);
