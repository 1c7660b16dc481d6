import assert from 'node:assert/strict';
import type { Json } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { assertSameRecord, rejectsWithCode } from '../fixtures/assertions.js';
import { createRun, runningRun, terminalRun } from '../fixtures/run-fixtures.js';
import { uuidv7 } from '../fixtures/uuid-v7.js';

/** Store contract: `events` (messages, numbered per (run, name) from 1). */
export const eventsGroup: CaseGroup = caseGroup('store.events', 'store: events', [
  conformanceCase('deliver: stores the message as seq 1; get reads it back', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    assert.deepEqual(await store.events.deliver(run.id, 'approved', { by: 'ops', level: 2 }, t0 + 3), { delivered: true, duplicate: false, seq: 1 });
    assertSameRecord(await store.events.get(run.id, 'approved', 1), {
      runId: run.id,
      name: 'approved',
      seq: 1,
      payload: { by: 'ops', level: 2 },
      deliveredAt: t0 + 3,
    });
    assert.equal(await store.events.get(run.id, 'approved', 2), undefined, 'no second message yet');
    assert.equal(await store.events.get(run.id, 'rejected', 1), undefined, 'an event never delivered is undefined');
  }),

  conformanceCase('deliver: every send is kept, numbered in arrival order per name', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    assert.deepEqual(await store.events.deliver(run.id, 'msg', 'first', t0 + 1), { delivered: true, duplicate: false, seq: 1 });
    assert.deepEqual(await store.events.deliver(run.id, 'msg', 'second', t0 + 2), { delivered: true, duplicate: false, seq: 2 });
    assert.deepEqual(
      await store.events.deliver(run.id, 'other', 'x', t0 + 3),
      { delivered: true, duplicate: false, seq: 1 },
      'names are numbered independently',
    );
    assert.deepEqual(await store.events.deliver(run.id, 'msg', 'third', t0 + 4), { delivered: true, duplicate: false, seq: 3 });
    for (const [seq, payload, at] of [
      [1, 'first', 1],
      [2, 'second', 2],
      [3, 'third', 4],
    ] as const) {
      assertSameRecord(await store.events.get(run.id, 'msg', seq), { runId: run.id, name: 'msg', seq, payload, deliveredAt: t0 + at });
    }
    assert.equal(await store.events.get(run.id, 'msg', 4), undefined);
  }),

  conformanceCase('deliver: 8 concurrent sends of one name get seq 1..8, each payload kept once', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.events.deliver(run.id, 'go', { from: i }, t0 + 1)));
    const seqs = results.map((r) => (r.delivered ? r.seq : 0)).sort((a, b) => a - b);
    assert.deepEqual(seqs, [1, 2, 3, 4, 5, 6, 7, 8], 'each send is stored under its own seq');
    for (const [i, r] of results.entries()) {
      assert.ok(r.delivered);
      assert.deepEqual((await store.events.get(run.id, 'go', r.seq))?.payload, { from: i }, `send ${i} is message ${r.seq}`);
    }
  }),

  conformanceCase('deliver: a repeated idempotency key stores nothing and names the first message', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    assert.deepEqual(await store.events.deliver(run.id, 'msg', 'a', t0 + 1), { delivered: true, duplicate: false, seq: 1 });
    assert.deepEqual(await store.events.deliver(run.id, 'msg', 'b', t0 + 2, { idempotencyKey: 'k-1' }), { delivered: true, duplicate: false, seq: 2 });
    assert.deepEqual(await store.events.deliver(run.id, 'msg', 'b again', t0 + 3, { idempotencyKey: 'k-1' }), { delivered: false, duplicate: true, seq: 2 });
    assert.deepEqual(
      await store.events.deliver(run.id, 'other', 'c', t0 + 4, { idempotencyKey: 'k-1' }),
      { delivered: false, duplicate: true, seq: 2 },
      'a key is per run, whatever the name',
    );
    assert.equal(await store.events.get(run.id, 'other', 1), undefined);
    assertSameRecord(await store.events.get(run.id, 'msg', 2), {
      runId: run.id,
      name: 'msg',
      seq: 2,
      payload: 'b',
      deliveredAt: t0 + 2,
      idempotencyKey: 'k-1',
    });
    assert.equal(await store.events.get(run.id, 'msg', 3), undefined, 'the repeat was not stored');
    assert.deepEqual(await store.events.deliver(run.id, 'msg', 'd', t0 + 5, { idempotencyKey: 'k-2' }), { delivered: true, duplicate: false, seq: 3 });
    const other = await createRun(store, t0);
    assert.deepEqual(
      await store.events.deliver(other.id, 'msg', 'e', t0 + 6, { idempotencyKey: 'k-1' }),
      { delivered: true, duplicate: false, seq: 1 },
      'keys of another run do not count',
    );
  }),

  conformanceCase('deliver: of 8 concurrent sends with one idempotency key exactly one is stored', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.events.deliver(run.id, 'go', { from: i }, t0 + 1, { idempotencyKey: 'once' })));
    const stored = results.flatMap((r, i) => (r.delivered ? [i] : []));
    assert.equal(stored.length, 1, `exactly one send must be stored, ${stored.length} were`);
    for (const r of results) assert.equal(r.delivered || r.duplicate, true, 'the others are duplicates');
    for (const r of results) assert.equal('seq' in r ? r.seq : undefined, 1, 'every answer names message 1');
    assert.deepEqual((await store.events.get(run.id, 'go', 1))?.payload, { from: stored[0] });
    assert.equal(await store.events.get(run.id, 'go', 2), undefined);
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

  conformanceCase('deliver: a second message wakes the run again', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.events.deliver(run.id, 'msg', 1, t0 + 1);
    await store.runs.transition(run.id, fence, { from: ['running'], to: 'waiting' }, t0 + 2);
    const again = await store.runs.claim(run.id, 'worker-b', 30_000, t0 + 3);
    assert.ok(again);
    assert.equal((await store.runs.get(run.id))?.wakeAt, undefined, 'the claim cleared the wake-up');
    await store.runs.transition(run.id, again.fence, { from: ['running'], to: 'waiting' }, t0 + 4);
    assert.deepEqual(await store.events.deliver(run.id, 'msg', 2, t0 + 5), { delivered: true, duplicate: false, seq: 2 });
    assert.equal((await store.runs.get(run.id))?.wakeAt, t0 + 5);
  }),

  conformanceCase('deliver: a terminal run refuses (delivered: false), storing nothing', async ({ store, t0 }) => {
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      const run = await terminalRun(store, t0, status);
      const before = await store.runs.get(run.id);
      assert.deepEqual(await store.events.deliver(run.id, 'late', 1, t0 + 1), { delivered: false, duplicate: false });
      assert.deepEqual(await store.events.deliver(run.id, 'late', 1, t0 + 1, { idempotencyKey: 'k' }), { delivered: false, duplicate: false });
      assert.equal(await store.events.get(run.id, 'late', 1), undefined);
      assert.deepEqual(await store.runs.get(run.id), before);
    }
  }),

  conformanceCase('deliver: a key stored before the run ended is still reported as a duplicate', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.events.deliver(run.id, 'msg', 1, t0 + 1, { idempotencyKey: 'k' });
    await store.runs.transition(run.id, fence, { from: ['running'], to: 'completed', output: null }, t0 + 2);
    assert.deepEqual(await store.events.deliver(run.id, 'msg', 1, t0 + 3, { idempotencyKey: 'k' }), { delivered: false, duplicate: true, seq: 1 });
  }),

  conformanceCase('deliver: a missing run is RUN_NOT_FOUND', async ({ store, t0 }) => {
    await rejectsWithCode(store.events.deliver(uuidv7(), 'go', 1, t0), 'RUN_NOT_FOUND');
    await rejectsWithCode(store.events.deliver(uuidv7(), 'go', 1, t0, { idempotencyKey: 'k' }), 'RUN_NOT_FOUND');
  }),

  conformanceCase('deliver: null and falsy payloads round-trip exactly', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    const payloads: Array<[string, Json]> = [
      ['null', null],
      ['zero', 0],
      ['false', false],
      ['empty', ''],
      ['obj', {}],
    ];
    for (const [name, payload] of payloads) await store.events.deliver(run.id, name, payload, t0);
    for (const [, payload] of payloads) await store.events.deliver(run.id, 'same', payload, t0);
    for (const [i, [name, payload]] of payloads.entries()) {
      const event = await store.events.get(run.id, name, 1);
      assert.ok(event, `event ${name} must exist`);
      assert.deepStrictEqual(event.payload, payload, `payload of ${name}`);
      assert.deepStrictEqual((await store.events.get(run.id, 'same', i + 1))?.payload, payload, `message ${i + 1} of one name`);
    }
  }),

  conformanceCase('events of one run are invisible to another', async ({ store, t0 }) => {
    const a = await createRun(store, t0);
    const b = await createRun(store, t0);
    await store.events.deliver(a.id, 'go', 'a', t0);
    assert.equal(await store.events.get(b.id, 'go', 1), undefined);
    assert.deepEqual(await store.events.deliver(b.id, 'go', 'b', t0), { delivered: true, duplicate: false, seq: 1 });
  }),
]);
