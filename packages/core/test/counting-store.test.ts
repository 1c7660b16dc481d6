import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore } from '@cairn/core';
import { countingStore } from '@cairn/core/backend';
import { rejectsWithCode } from './helpers/engine-fixture.js';

const RUN = '01900000-0000-7000-8000-000000000001';

describe('countingStore (@cairn/core/backend)', () => {
  it('records each call with its run, arguments and outcome, and forwards it unchanged', async () => {
    const store = countingStore(createMemoryStore(), { cloneArgs: true });
    const input = { n: 1 };
    await store.runs.create({ id: RUN, workflow: 'w', version: '1', input }, 1);
    input.n = 2;
    assert.equal(await store.runs.claim(RUN, 'me', 1000, 2).then((run) => run?.status), 'running');
    assert.equal(await store.runs.claim(RUN, 'other', 1000, 2), undefined);
    await assert.rejects(store.runs.renew(RUN, 99, 1000, 3));
    assert.deepEqual(
      store.calls.map((c) => [c.method, c.runId, c.write, c.outcome?.ok]),
      [
        ['runs.create', undefined, true, true],
        ['runs.claim', RUN, true, true],
        ['runs.claim', RUN, true, true],
        ['runs.renew', RUN, true, false],
      ],
    );
    assert.deepEqual((store.calls[0]!.args[0] as { input: unknown }).input, { n: 1 }, 'a clone taken when the call started');
    assert.equal(store.count('runs.claim'), 2);
    assert.equal(store.countReturned('runs.claim', RUN), 1);
    assert.equal(store.inflight, 0);
    assert.equal((await store.inner.runs.get(RUN))?.status, 'running');
    assert.equal(store.calls.length, 4, 'calls on inner are not counted');
  });

  it('around decides what the caller gets; the call is counted and its outcome is what around returned', async () => {
    const store = countingStore(createMemoryStore(), {
      around: (call, forward, args) => (call.method === 'runs.get' ? Promise.resolve('replaced') : forward(...args)),
    });
    assert.equal(await store.runs.get(RUN), 'replaced');
    assert.deepEqual(store.calls[0]!.outcome, { ok: true, value: 'replaced' });
    assert.deepEqual(store.counts(), { 'runs.get': 1 });
  });

  it('without leaves optional members out; history: false keeps only the tally', async () => {
    const inner = createMemoryStore();
    assert.ok(inner.signals && inner.slots, 'the memory store has signals and slots');
    const store = countingStore(inner, { without: ['signals', 'slots'], history: false });
    assert.equal(store.signals, undefined);
    assert.equal(store.slots, undefined);
    await store.runs.get(RUN);
    await store.runs.get(RUN);
    assert.deepEqual(store.counts(), { 'runs.get': 2 });
    assert.equal(store.count('runs.get'), 2);
    assert.deepEqual(store.calls, []);
    assert.throws(() => store.writes(), /history: false/);
    store.reset();
    assert.deepEqual(store.counts(), {});
  });

  it('rejects an unknown member in without with INVALID_INPUT', async () => {
    await rejectsWithCode(() => countingStore(createMemoryStore(), { without: ['runs' as 'slots'] }), 'INVALID_INPUT');
  });
});
