import assert from 'node:assert/strict';
import { conformanceCase, type ConformanceCase } from '../../case.js';
import { assertSameRecord, rejectsWithCode } from '../../fixtures/assertions.js';
import { LEASE_MS, createRun, newRun, idsOf } from '../../fixtures/run-fixtures.js';
import { uuidv7 } from '../../fixtures/uuid-v7.js';

/** Store contract: `runs.create`: a new run and its stored fields, priorities, idempotency keys. */
export const runCreateCases: ConformanceCase[] = [
  conformanceCase('create: a new run is pending, fence 0, unleased, with every field stored', async ({ store, t0 }) => {
    const parentId = uuidv7();
    const input = newRun({ input: { items: [1, 2], note: 'ü' }, parent: { runId: parentId, stepKey: 'spawn#2' }, idempotencyKey: 'order-1', wakeAt: t0 + 5 });
    const { run, created } = await store.runs.create(input, t0);
    assert.equal(created, true);
    const expected = {
      id: input.id,
      workflow: 'orders',
      version: 'v1',
      input: { items: [1, 2], note: 'ü' },
      status: 'pending',
      parent: { runId: parentId, stepKey: 'spawn#2' },
      idempotencyKey: 'order-1',
      fence: 0,
      cancelRequested: false,
      wakeAt: t0 + 5,
      createdAt: t0,
      updatedAt: t0,
    };
    assertSameRecord(run, expected, 'create must return the stored run');
    assertSameRecord(await store.runs.get(input.id), expected, 'get must return what create stored');
  }),

  conformanceCase('create: a deadline is stored as given and kept through claim, waiting and the end', async ({ store, t0 }) => {
    const deadline = t0 + 3_155_760_000_000;
    const input = newRun({ deadline, wakeAt: t0 + 5 });
    const { run } = await store.runs.create(input, t0);
    assert.equal(run.deadline, deadline);
    assert.equal((await store.runs.get(run.id))?.deadline, deadline);
    const claimed = await store.runs.claim(run.id, 'w', LEASE_MS, t0 + 1);
    assert.equal(claimed?.deadline, deadline);
    const waiting = await store.runs.transition(run.id, claimed!.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 50 }, t0 + 2);
    assert.equal(waiting.deadline, deadline);
    const again = await store.runs.claim(run.id, 'w', LEASE_MS, t0 + 60);
    const failed = await store.runs.transition(
      run.id,
      again!.fence,
      { from: ['running'], to: 'failed', error: { name: 'CairnError', message: 'late', code: 'DEADLINE_EXCEEDED' } },
      t0 + 61,
    );
    assert.equal(failed.deadline, deadline);
    assert.equal((await store.runs.list({})).runs.find((r) => r.id === run.id)?.deadline, deadline, 'list returns it');
    const none = await createRun(store, t0);
    assert.equal((await store.runs.get(none.id))?.deadline, undefined, 'no deadline: absent');
    assert.equal((await store.runs.get(none.id))?.cancelReason, undefined);
  }),

  conformanceCase('create: a trace context is stored as given and kept through claim, waiting, the end and an idempotent create', async ({ store, t0 }) => {
    // Keys a document store must not take as paths or operators, and W3C values with their separators.
    const traceContext = {
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
      'x.vendor.$id': 'ünïcode ✓ "quoted"',
    };
    const input = newRun({ traceContext, idempotencyKey: `trace-${t0}` });
    const { run } = await store.runs.create(input, t0);
    assert.deepEqual(run.traceContext, traceContext);
    assert.deepEqual((await store.runs.get(run.id))?.traceContext, traceContext);
    const claimed = await store.runs.claim(run.id, 'w', LEASE_MS, t0 + 1);
    assert.deepEqual(claimed?.traceContext, traceContext);
    const waiting = await store.runs.transition(run.id, claimed!.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 50 }, t0 + 2);
    assert.deepEqual(waiting.traceContext, traceContext);
    const again = await store.runs.claim(run.id, 'w', LEASE_MS, t0 + 60);
    const done = await store.runs.transition(run.id, again!.fence, { from: ['running'], to: 'completed', output: 1 }, t0 + 61);
    assert.deepEqual(done.traceContext, traceContext);
    const repeat = await store.runs.create({ ...input, id: uuidv7() }, t0 + 62);
    assert.equal(repeat.created, false);
    assert.deepEqual(repeat.run.traceContext, traceContext, 'an idempotent create returns the stored context');
    const none = await createRun(store, t0);
    assert.equal((await store.runs.get(none.id))?.traceContext, undefined, 'no trace context: absent');
  }),

  conformanceCase(
    'create: a priority round-trips through create, get and list (absent and 0 read back absent) and through claim and the end',
    async ({ store, t0 }) => {
      const cases: Array<[number | undefined, number | undefined]> = [
        [undefined, undefined],
        [0, undefined],
        [-1000, -1000],
        [7, 7],
        [1000, 1000],
      ];
      for (const [i, [priority, expected]] of cases.entries()) {
        const input = newRun(priority === undefined ? {} : { priority });
        const { run } = await store.runs.create(input, t0 + i);
        const what = `priority ${String(priority)}`;
        assert.equal(run.priority, expected, `${what}: create returns it`);
        assert.equal((await store.runs.get(run.id))?.priority, expected, `${what}: get`);
        const listed = (await store.runs.list({ workflow: 'orders' })).runs.find((r) => r.id === run.id);
        assert.equal(listed?.priority, expected, `${what}: list`);
      }
      const kept = await createRun(store, t0, { priority: -3 });
      const claimed = await store.runs.claim(kept.id, 'w', LEASE_MS, t0 + 10);
      assert.equal(claimed?.priority, -3, 'claim keeps the priority');
      const done = await store.runs.transition(kept.id, claimed!.fence, { from: ['running'], to: 'completed', output: 1 }, t0 + 11);
      assert.equal(done.priority, -3, 'the end keeps the priority');
      // Priority and slots are one contract (issue 17), adopted together: a store without slots skips this.
    },
    { requires: ['slots'] },
  ),

  conformanceCase('create: a priority outside -1000..1000 or not an integer is INVALID_INPUT and creates nothing', async ({ store, t0 }) => {
    for (const priority of [1001, -1001, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '7', null]) {
      const input = newRun({ priority: priority as number });
      await rejectsWithCode(store.runs.create(input, t0), 'INVALID_INPUT', `create with priority ${String(priority)}`);
      assert.equal(await store.runs.get(input.id), undefined, `priority ${String(priority)}: no run stored`);
    }
  }),

  conformanceCase('create: without wakeAt the run has none, and no lease, output or error', async ({ store, t0 }) => {
    const run = await createRun(store, t0, { input: null });
    const stored = await store.runs.get(run.id);
    assert.ok(stored);
    assert.equal(stored.wakeAt, undefined);
    assert.equal(stored.lease, undefined);
    assert.equal(stored.output, undefined);
    assert.equal(stored.error, undefined);
    assert.equal(stored.input, null, 'a null input must stay null');
  }),

  conformanceCase('create: a repeated idempotency key returns the existing run, created: false, writing nothing', async ({ store, t0 }) => {
    const first = await store.runs.create(newRun({ idempotencyKey: 'k-1', input: 'first' }), t0);
    const again = newRun({ idempotencyKey: 'k-1', input: 'second', version: 'v2' });
    const second = await store.runs.create(again, t0 + 10);
    assert.equal(second.created, false);
    assert.equal(second.run.id, first.run.id);
    assert.equal(second.run.input, 'first');
    assert.equal(second.run.version, 'v1');
    assert.equal(await store.runs.get(again.id), undefined, 'the second id must not exist');
    assert.deepEqual(idsOf((await store.runs.list({ workflow: 'orders' })).runs), [first.run.id]);
  }),

  conformanceCase('create: 8 concurrent creates with one idempotency key create exactly one run', async ({ store, t0 }) => {
    const attempts = Array.from({ length: 8 }, (_, i) => newRun({ idempotencyKey: 'race', input: i }));
    const results = await Promise.all(attempts.map((r) => store.runs.create(r, t0)));
    const winners = results.filter((r) => r.created);
    assert.equal(winners.length, 1, `exactly one create must report created: true, got ${winners.length}`);
    const winnerId = winners[0]?.run.id;
    for (const r of results) assert.equal(r.run.id, winnerId, 'every create must return the one run');
    assert.deepEqual(idsOf((await store.runs.list({ workflow: 'orders' })).runs), [winnerId]);
  }),

  conformanceCase('create: different workflows may share an idempotency key', async ({ store, t0 }) => {
    const a = await store.runs.create(newRun({ workflow: 'orders', idempotencyKey: 'shared' }), t0);
    const b = await store.runs.create(newRun({ workflow: 'refunds', idempotencyKey: 'shared' }), t0);
    assert.equal(a.created, true);
    assert.equal(b.created, true);
    assert.notEqual(a.run.id, b.run.id);
  }),

  conformanceCase('create: (workflow, key) pairs that concatenate alike stay distinct', async ({ store, t0 }) => {
    // A backend joining workflow and key with a separator would make these two collide.
    const a = await store.runs.create(newRun({ workflow: 'a', idempotencyKey: 'b:c' }), t0);
    const b = await store.runs.create(newRun({ workflow: 'a:b', idempotencyKey: 'c' }), t0);
    const c = await store.runs.create(newRun({ workflow: 'a/b', idempotencyKey: 'c' }), t0);
    assert.deepEqual([a.created, b.created, c.created], [true, true, true]);
  }),

  conformanceCase('create: runs without an idempotency key never collide', async ({ store, t0 }) => {
    const a = await store.runs.create(newRun(), t0);
    const b = await store.runs.create(newRun(), t0);
    assert.deepEqual([a.created, b.created], [true, true]);
  }),
];
