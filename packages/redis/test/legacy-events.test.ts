import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runTag } from '../src/keys.js';
import { MODES, skip, withStore } from './support/fixture.js';
import { newRun, T0 } from './support/runs.js';

// Releases before events were messages kept one event per name in hash `R:events` (field = name,
// value = [deliveredAt, payload]; first write won). Such an event must read as message 1.
for (const mode of MODES) {
  describe(`events stored before messages (${mode.title})`, { skip }, () => {
    it('an event in the old events hash is message 1 of its name; the next send is message 2', async () => {
      await withStore({ cluster: mode.cluster }, async ({ store, client, prefix }) => {
        const { run } = await store.runs.create(newRun(), T0);
        await client.hset(`${prefix}:run:{${runTag(run.id)}}:events`, 'approved', JSON.stringify([T0 + 1, { by: 'old' }]));
        assert.deepEqual(await store.events.get(run.id, 'approved', 1), {
          runId: run.id,
          name: 'approved',
          seq: 1,
          payload: { by: 'old' },
          deliveredAt: T0 + 1,
        });
        assert.equal(await store.events.get(run.id, 'approved', 2), undefined);
        assert.deepEqual(await store.events.deliver(run.id, 'approved', 'new', T0 + 2), { delivered: true, duplicate: false, seq: 2 });
        assert.deepEqual((await store.events.get(run.id, 'approved', 2))?.payload, 'new');
        assert.deepEqual(await store.events.deliver(run.id, 'other', 'x', T0 + 3), { delivered: true, duplicate: false, seq: 1 });
        assert.equal(await store.runs.delete(run.id), true);
        assert.equal(await store.events.get(run.id, 'approved', 1), undefined, 'deleteRun removes both hashes');
      });
    });
  });
}
