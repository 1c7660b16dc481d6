import assert from 'node:assert/strict';
import type { Json } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { assertSameRecord, rejectsWithCode } from '../fixtures/assertions.js';
import { createRun, runningRun, terminalRun } from '../fixtures/run-fixtures.js';
import { uuidv7 } from '../fixtures/uuid-v7.js';

/** Store contract: `events`. */
export const eventsGroup: CaseGroup = caseGroup('store.events', 'store: events', [
  conformanceCase('deliver: stores the event; get reads it back', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    assert.deepEqual(await store.events.deliver(run.id, 'approved', { by: 'ops', level: 2 }, t0 + 3), { delivered: true });
    assertSameRecord(await store.events.get(run.id, 'approved'), { runId: run.id, name: 'approved', payload: { by: 'ops', level: 2 }, deliveredAt: t0 + 3 });
    assert.equal(await store.events.get(run.id, 'rejected'), undefined, 'an event never delivered is undefined');
  }),

  conformanceCase('deliver: the first write wins', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    await store.events.deliver(run.id, 'approved', 'first', t0 + 1);
    assert.deepEqual(await store.events.deliver(run.id, 'approved', 'second', t0 + 2), { delivered: false });
    assertSameRecord(await store.events.get(run.id, 'approved'), { runId: run.id, name: 'approved', payload: 'first', deliveredAt: t0 + 1 });
    assert.deepEqual(await store.events.deliver(run.id, 'other', 'x', t0 + 3), { delivered: true }, 'names are independent');
  }),

  conformanceCase('deliver: of 8 concurrent deliveries of one name exactly one is stored', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.events.deliver(run.id, 'go', { from: i }, t0 + 1)));
    const winners = results.flatMap((r, i) => (r.delivered ? [i] : []));
    assert.equal(winners.length, 1, `exactly one delivery must win, ${winners.length} did`);
    assert.deepEqual((await store.events.get(run.id, 'go'))?.payload, { from: winners[0] });
  }),

  conformanceCase('deliver: wakes the run (wakeAt <= now), also while it runs', async ({ store, t0 }) => {
    const pending = await createRun(store, t0, { wakeAt: t0 + 60_000 });
    await store.events.deliver(pending.id, 'go', null, t0 + 5);
    assert.equal((await store.runs.get(pending.id))?.wakeAt, t0 + 5);

    const { run, fence } = await runningRun(store, t0);
    await store.events.deliver(run.id, 'go', null, t0 + 5);
    // The executing worker goes to sleep after the delivery: the wake-up must survive it.
    const waiting = await store.runs.transition(run.id, fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 60_000 }, t0 + 6);
    assert.equal(waiting.wakeAt, t0 + 5);
    const due = (await store.runs.findDue(t0 + 5, 10)).sort((a, b) => (a.id < b.id ? -1 : 1));
    const expected = [
      { id: pending.id, workflow: 'orders', reason: 'wake' },
      { id: run.id, workflow: 'orders', reason: 'wake' },
    ].sort((a, b) => (a.id < b.id ? -1 : 1));
    assert.deepEqual(due, expected, 'both runs are due');
  }),

  conformanceCase('deliver: a terminal run refuses (delivered: false), storing nothing', async ({ store, t0 }) => {
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      const run = await terminalRun(store, t0, status);
      const before = await store.runs.get(run.id);
      assert.deepEqual(await store.events.deliver(run.id, 'late', 1, t0 + 1), { delivered: false });
      assert.equal(await store.events.get(run.id, 'late'), undefined);
      assert.deepEqual(await store.runs.get(run.id), before);
    }
  }),

  conformanceCase('deliver: a missing run is RUN_NOT_FOUND', async ({ store, t0 }) => {
    await rejectsWithCode(store.events.deliver(uuidv7(), 'go', 1, t0), 'RUN_NOT_FOUND');
  }),

  conformanceCase('deliver: null and falsy payloads round-trip exactly', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    const payloads: Array<[string, Json]> = [['null', null], ['zero', 0], ['false', false], ['empty', ''], ['obj', {}]];
    for (const [name, payload] of payloads) await store.events.deliver(run.id, name, payload, t0);
    for (const [name, payload] of payloads) {
      const event = await store.events.get(run.id, name);
      assert.ok(event, `event ${name} must exist`);
      assert.deepStrictEqual(event.payload, payload, `payload of ${name}`);
    }
  }),

  conformanceCase('events of one run are invisible to another', async ({ store, t0 }) => {
    const a = await createRun(store, t0);
    const b = await createRun(store, t0);
    await store.events.deliver(a.id, 'go', 'a', t0);
    assert.equal(await store.events.get(b.id, 'go'), undefined);
    assert.deepEqual(await store.events.deliver(b.id, 'go', 'b', t0), { delivered: true });
  }),
]);
