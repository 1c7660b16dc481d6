import assert from 'node:assert/strict';
import { CairnError } from '@cairn/core';
import type { Json } from '@cairn/core';
import { claimedRun, createRun, newId } from './support/fixtures.js';
import { storeTest } from './support/server.js';

const isCode = (code: string) => (err: unknown) => CairnError.is(err) && err.code === code;

storeTest('create: pending, fence 0, idempotent per workflow (8 racing creates, one created)', async (store) => {
  const ids = Array.from({ length: 8 }, newId);
  const results = await Promise.all(ids.map((id) => store.runs.create({ id, workflow: 'wf', version: 'v1', input: null, idempotencyKey: 'same' }, 10)));
  assert.equal(results.filter((r) => r.created).length, 1);
  const winner = results.find((r) => r.created)!.run;
  for (const r of results) assert.equal(r.run.id, winner.id);
  assert.equal(winner.status, 'pending');
  assert.equal(winner.fence, 0);
  assert.equal(winner.input, null);
  // Same key, other workflow: a different run.
  const other = await store.runs.create({ id: newId(), workflow: 'other', version: 'v1', input: 1, idempotencyKey: 'same' }, 11);
  assert.equal(other.created, true);
  // A repeated id without a key is bad input, and changes nothing.
  await assert.rejects(store.runs.create({ id: winner.id, workflow: 'x', version: 'v1', input: 2 }, 12), isCode('INVALID_INPUT'));
  assert.deepEqual(await store.runs.get(winner.id), winner);
});

storeTest('create: the idempotency key is free again after delete', async (store) => {
  const first = await createRun(store, 10, { idempotencyKey: 'k' });
  assert.equal(await store.runs.delete(first.id), true);
  const second = await store.runs.create({ id: newId(), workflow: 'wf', version: 'v1', input: 1, idempotencyKey: 'k' }, 11);
  assert.equal(second.created, true);
  assert.notEqual(second.run.id, first.id);
});

storeTest('claim: 8 racing claimers, exactly one wins and fence is 1', async (store) => {
  for (let round = 0; round < 5; round++) {
    const run = await createRun(store, 100);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.runs.claim(run.id, `o${i}`, 1000, 200)));
    const won = results.filter((r) => r !== undefined);
    assert.equal(won.length, 1);
    const stored = await store.runs.get(run.id);
    assert.equal(stored?.fence, 1);
    assert.equal(stored?.lease?.owner, won[0]?.lease?.owner);
  }
});

storeTest('claim: clears wakeAt; refuses a live lease of another owner; same owner re-claims; expired lease taken over', async (store) => {
  const run = await createRun(store, 100, { wakeAt: 100 });
  assert.equal(run.wakeAt, 100);
  const a = await store.runs.claim(run.id, 'a', 1000, 200);
  assert.equal(a?.wakeAt, undefined);
  assert.equal(a?.status, 'running');
  assert.deepEqual(a?.lease, { owner: 'a', expiresAt: 1200 });
  assert.equal(await store.runs.claim(run.id, 'b', 1000, 1199), undefined);
  const again = await store.runs.claim(run.id, 'a', 1000, 300);
  assert.equal(again?.fence, 2);
  const b = await store.runs.claim(run.id, 'b', 1000, 1300);
  assert.equal(b?.fence, 3);
  assert.equal(b?.lease?.owner, 'b');
  assert.equal(await store.runs.claim('missing', 'a', 1000, 1), undefined);
});

storeTest('claim and renew refuse terminal runs; renew with a stale fence is LEASE_LOST and writes nothing', async (store) => {
  const run = await claimedRun(store, 100);
  const renewed = await store.runs.renew(run.id, run.fence, 5000, 500);
  assert.equal(renewed.lease?.expiresAt, 5500);
  await assert.rejects(store.runs.renew(run.id, run.fence + 1, 5000, 600), isCode('LEASE_LOST'));
  assert.deepEqual(await store.runs.get(run.id), renewed);
  await store.runs.transition(run.id, run.fence, { from: ['running'], to: 'completed', output: 1 }, 700);
  assert.equal(await store.runs.claim(run.id, 'x', 1000, 800), undefined);
  await assert.rejects(store.runs.renew(run.id, run.fence, 5000, 800), isCode('LEASE_LOST'));
});

storeTest('transition: CAS on status, fence checked first, terminal refused, nothing written on refusal', async (store) => {
  const run = await claimedRun(store, 100);
  await assert.rejects(store.runs.transition(run.id, run.fence + 1, { from: ['running'], to: 'waiting' }, 200), isCode('LEASE_LOST'));
  await assert.rejects(store.runs.transition(run.id, run.fence, { from: ['pending'], to: 'waiting' }, 200), isCode('RUN_CONFLICT'));
  await assert.rejects(store.runs.transition('missing', 1, { from: ['pending'], to: 'waiting' }, 200), isCode('RUN_NOT_FOUND'));
  assert.deepEqual(await store.runs.get(run.id), run);
  const done = await store.runs.transition(
    run.id,
    run.fence,
    { from: ['running'], to: 'failed', error: { name: 'E', message: 'm', data: { 'a.b': { $x: '' } } } },
    300,
  );
  assert.equal(done.status, 'failed');
  assert.equal(done.lease, undefined);
  assert.deepEqual(done.error, { name: 'E', message: 'm', data: { 'a.b': { $x: '' } } });
  await assert.rejects(store.runs.transition(run.id, run.fence, { from: ['failed'], to: 'running' }, 400), isCode('RUN_CONFLICT'));
});

storeTest('transition to waiting keeps the earlier of its wakeAt and a wake-up since the claim', async (store) => {
  const run = await claimedRun(store, 100);
  await store.runs.wake(run.id, 150); // an event arrives while it runs
  const waiting = await store.runs.transition(run.id, run.fence, { from: ['running'], to: 'waiting', wakeAt: 10_000 }, 200);
  assert.equal(waiting.wakeAt, 150);
  assert.equal(waiting.lease, undefined);
  assert.deepEqual(await store.runs.findDue(150, 10), [{ id: run.id, workflow: 'wf', reason: 'wake' }]);

  const second = await claimedRun(store, 100);
  const later = await store.runs.transition(second.id, second.fence, { from: ['running'], to: 'waiting', wakeAt: 10_000 }, 200);
  assert.equal(later.wakeAt, 10_000);
  const noTimer = await claimedRun(store, 100);
  const forever = await store.runs.transition(noTimer.id, noTimer.fence, { from: ['running'], to: 'waiting' }, 200);
  assert.equal(forever.wakeAt, undefined);
  assert.deepEqual(await store.runs.findDue(9_999, 10), [{ id: run.id, workflow: 'wf', reason: 'wake' }]);
});

storeTest('terminal outputs: undefined, null, 0, false and empty string stay distinct', async (store) => {
  const outputs: Array<Json | undefined> = [undefined, null, 0, false, '', [], {}];
  for (const output of outputs) {
    const run = await claimedRun(store, 100);
    const done = await store.runs.transition(run.id, run.fence, { from: ['running'], to: 'completed', ...(output === undefined ? {} : { output }) }, 200);
    const read = await store.runs.get(run.id);
    assert.equal('output' in done, output !== undefined);
    assert.equal('output' in read!, output !== undefined);
    assert.deepEqual(read?.output, output);
    assert.equal(read?.wakeAt, undefined);
  }
});

storeTest('wake and requestCancel: min(wakeAt, now), no-ops on terminal, undefined on missing', async (store) => {
  const run = await createRun(store, 100, { wakeAt: 5000 });
  await store.runs.wake(run.id, 300);
  assert.equal((await store.runs.get(run.id))?.wakeAt, 300);
  await store.runs.wake(run.id, 400);
  assert.equal((await store.runs.get(run.id))?.wakeAt, 300);
  const cancelled = await store.runs.requestCancel(run.id, 200);
  assert.equal(cancelled?.cancelRequested, true);
  assert.equal(cancelled?.wakeAt, 200);
  assert.equal(await store.runs.requestCancel('missing', 1), undefined);
  await store.runs.wake('missing', 1);
  const done = await claimedRun(store, 100);
  const final = await store.runs.transition(done.id, done.fence, { from: ['running'], to: 'cancelled' }, 200);
  await store.runs.wake(done.id, 300);
  assert.deepEqual(await store.runs.requestCancel(done.id, 300), final);
  assert.deepEqual(await store.runs.get(done.id), final);
});

storeTest('findDue: due wakes and expired leases, earliest first, limit, never terminal or future', async (store) => {
  const a = await createRun(store, 100, { wakeAt: 300 });
  const b = await claimedRun(store, 100); // lease until 100 + 1 + 30000
  const c = await createRun(store, 100, { wakeAt: 200 });
  await createRun(store, 100, { wakeAt: 99_999 });
  const d = await claimedRun(store, 100);
  await store.runs.transition(d.id, d.fence, { from: ['running'], to: 'completed' }, 150);
  assert.deepEqual(await store.runs.findDue(250, 10), [{ id: c.id, workflow: 'wf', reason: 'wake' }]);
  assert.deepEqual(
    (await store.runs.findDue(40_000, 10)).map((r) => [r.id, r.reason]),
    [
      [c.id, 'wake'],
      [a.id, 'wake'],
      [b.id, 'lease-expired'],
    ],
  );
  assert.equal((await store.runs.findDue(40_000, 2)).length, 2);
  assert.deepEqual(await store.runs.findDue(40_000, 0), []);
  // A running run woken while it runs is not due until its lease expires.
  await store.runs.renew(b.id, b.fence, 100_000, 1000);
  await store.runs.wake(b.id, 1000);
  assert.deepEqual(
    (await store.runs.findDue(40_000, 10)).map((r) => r.id),
    [c.id, a.id],
  );
});

storeTest('list: newest first, filters, cursor pages without gaps or repeats', async (store) => {
  const made: string[] = [];
  for (let i = 0; i < 25; i++) {
    const run = await createRun(store, 1000 + Math.floor(i / 3), { workflow: i % 2 ? 'odd' : 'even' });
    made.push(run.id);
  }
  const expected = (await Promise.all(made.map((id) => store.runs.get(id))))
    .map((r) => r!)
    .sort((x, y) => y.createdAt - x.createdAt || (x.id < y.id ? 1 : -1))
    .map((r) => r.id);
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.runs.list({ limit: 4, ...(cursor ? { cursor } : {}) });
    seen.push(...page.runs.map((r) => r.id));
    cursor = page.nextCursor;
  } while (cursor);
  assert.deepEqual(seen, expected);
  const odd = await store.runs.list({ workflow: 'odd', limit: 1000 });
  assert.equal(odd.runs.length, 12);
  assert.equal(odd.nextCursor, undefined);
  const window = await store.runs.list({ createdAfter: 1002, createdBefore: 1005 });
  assert.equal(window.runs.length, 9);
  assert.ok(window.runs.every((r) => r.createdAt >= 1002 && r.createdAt < 1005));
  assert.equal((await store.runs.list({ status: ['running', 'waiting'] })).runs.length, 0);
  assert.equal((await store.runs.list({ status: 'pending', limit: 1000 })).runs.length, 25);
  await assert.rejects(store.runs.list({ limit: 0 }), isCode('INVALID_INPUT'));
  await assert.rejects(store.runs.list({ cursor: 'nope' }), isCode('INVALID_INPUT'));
});

storeTest('delete removes everything in one write and reports whether the run existed', async (store) => {
  const run = await claimedRun(store, 100);
  await store.steps.insert(run.id, run.fence, { key: 's', name: 's', kind: 'task', seq: 0, status: 'running', maxAttempts: 1, worker: 'w' }, 200);
  await store.state.set(run.id, run.fence, 'k', 1, 200);
  await store.events.deliver(run.id, 'e', 1, 200);
  assert.equal(await store.runs.delete(run.id), true);
  assert.equal(await store.runs.get(run.id), undefined);
  assert.deepEqual(await store.steps.load(run.id), []);
  assert.deepEqual(await store.history.list(run.id), []);
  assert.deepEqual(await store.state.get(run.id), {});
  assert.equal(await store.events.get(run.id, 'e', 1), undefined);
  assert.equal(await store.runs.delete(run.id), false);
});
