import assert from 'node:assert/strict';
import type { ErrorRecord, Json, RunPage, RunRecord, RunStatus, RunSummary } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { assertSameRecord, rejectsWithCode } from '../fixtures/assertions.js';
import { LEASE_MS, createRun, newRun, runningRun, shuffled, snapshotRun, takeOver, terminalRun } from '../fixtures/run-fixtures.js';
import { uuidv7 } from '../fixtures/uuid-v7.js';

/** An error record with every optional field, nested cause and awkward text. */
export const SAMPLE_ERROR: ErrorRecord = {
  name: 'TypeError',
  message: 'card "4242" declined — ünïcode ✓',
  code: 'STEP_FAILED',
  stack: 'TypeError: card declined\n    at charge (billing.ts:12:7)',
  data: { attempt: 2, tags: ['a', null], nested: { ok: false } },
  cause: { name: 'Error', message: 'upstream 502' },
};

/** Values that naive serialisation confuses with each other or with "absent". */
export const FALSY_OUTPUTS: ReadonlyArray<{ label: string; value: Json | undefined }> = [
  { label: '0', value: 0 },
  { label: 'false', value: false },
  { label: "''", value: '' },
  { label: 'null', value: null },
  { label: 'undefined (absent)', value: undefined },
  { label: '{}', value: {} },
  { label: '[]', value: [] },
  { label: '{ a: null }', value: { a: null } },
];

const ids = (runs: readonly { id: string }[]) => runs.map((r) => r.id);

/** Expected `runs.list` order: `createdAt` desc, then `id` desc. */
const newestFirst = (a: RunRecord, b: RunRecord) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** Follows `nextCursor` to the end and returns every page. */
async function allPages(list: (cursor?: string) => Promise<RunPage>): Promise<RunSummary[][]> {
  const pages: RunSummary[][] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard += 1) {
    const page = await list(cursor);
    pages.push(page.runs);
    if (page.nextCursor === undefined) return pages;
    cursor = page.nextCursor;
  }
  assert.fail('runs.list kept returning a nextCursor after 1000 pages');
}

const create = [
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
    assert.deepEqual(ids((await store.runs.list({ workflow: 'orders' })).runs), [first.run.id]);
  }),

  conformanceCase('create: 8 concurrent creates with one idempotency key create exactly one run', async ({ store, t0 }) => {
    const attempts = Array.from({ length: 8 }, (_, i) => newRun({ idempotencyKey: 'race', input: i }));
    const results = await Promise.all(attempts.map((r) => store.runs.create(r, t0)));
    const winners = results.filter((r) => r.created);
    assert.equal(winners.length, 1, `exactly one create must report created: true, got ${winners.length}`);
    const winnerId = winners[0]?.run.id;
    for (const r of results) assert.equal(r.run.id, winnerId, 'every create must return the one run');
    assert.deepEqual(ids((await store.runs.list({ workflow: 'orders' })).runs), [winnerId]);
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

const get = [
  conformanceCase('get: a missing run is undefined', async ({ store }) => {
    assert.equal(await store.runs.get(uuidv7()), undefined);
  }),

  conformanceCase('get: a returned record is a copy; mutating it changes nothing stored', async ({ store, t0 }) => {
    const run = await createRun(store, t0, { input: { n: 1 } });
    const read = await store.runs.get(run.id);
    assert.ok(read);
    (read.input as { n: number }).n = 2;
    read.status = 'completed';
    const again = await store.runs.get(run.id);
    assert.deepEqual(again?.input, { n: 1 });
    assert.equal(again?.status, 'pending');
  }),
];

const list = [
  conformanceCase('list: newest first by createdAt, then id, whatever the insertion order', async ({ store, t0 }) => {
    // The later run gets the smaller id, so ordering by id alone would be caught.
    const [small, large] = [uuidv7(), uuidv7()];
    const older = await createRun(store, t0, { id: large! });
    const newer = await createRun(store, t0 + 10, { id: small! });
    assert.deepEqual(ids((await store.runs.list({})).runs), [newer.id, older.id]);
  }),

  conformanceCase('list: filters by workflow, status (one or several) and creation time', async ({ store, t0 }) => {
    const a0 = await createRun(store, t0, { workflow: 'a' });
    const a1 = await runningRun(store, t0 + 10, { workflow: 'a' });
    const a2 = await createRun(store, t0 + 20, { workflow: 'a' });
    const b0 = await createRun(store, t0 + 10, { workflow: 'b' });
    const done = await runningRun(store, t0 + 30, { workflow: 'b' });
    await store.runs.transition(done.run.id, done.fence, { from: ['running'], to: 'completed', output: 1 }, t0 + 31);

    assert.deepEqual(ids((await store.runs.list({ workflow: 'a' })).runs), [a2.id, a1.run.id, a0.id]);
    assert.deepEqual(ids((await store.runs.list({ status: 'pending' })).runs), [a2.id, b0.id, a0.id]);
    assert.deepEqual(ids((await store.runs.list({ status: ['running', 'completed'] })).runs), [done.run.id, a1.run.id]);
    assert.deepEqual(ids((await store.runs.list({ workflow: 'a', status: 'pending' })).runs), [a2.id, a0.id]);
    assert.deepEqual(ids((await store.runs.list({ workflow: 'a', createdAfter: t0 + 10 })).runs), [a2.id, a1.run.id], 'createdAfter is inclusive');
    assert.deepEqual(ids((await store.runs.list({ workflow: 'a', createdBefore: t0 + 20 })).runs), [a1.run.id, a0.id], 'createdBefore is exclusive');
    assert.deepEqual(
      ids((await store.runs.list({ createdAfter: t0 + 10, createdBefore: t0 + 20 })).runs),
      ids([a1.run, b0].sort(newestFirst)),
      'equal createdAt: id desc',
    );
    assert.deepEqual(await store.runs.list({ workflow: 'nobody' }), { runs: [] }, 'no match: an empty page without a cursor');
  }),

  conformanceCase('list: cursor pagination covers every run exactly once, across equal createdAt values', async ({ store, t0 }) => {
    const created: RunRecord[] = [];
    // 7 runs share one createdAt and 4 share another; insertion order is shuffled against id order.
    const plan = shuffled([...Array.from({ length: 7 }, () => t0), ...Array.from({ length: 4 }, () => t0 + 1)]);
    const idsInOrder = shuffled(plan.map(() => uuidv7()));
    for (const [i, at] of plan.entries()) created.push(await createRun(store, at, { id: idsInOrder[i]!, workflow: 'paged' }));
    await createRun(store, t0, { workflow: 'other' });
    const expected = ids([...created].sort(newestFirst));

    for (const limit of [1, 3, 4, 11]) {
      const pages = await allPages((cursor) => store.runs.list({ workflow: 'paged', limit, ...(cursor === undefined ? {} : { cursor }) }));
      for (const page of pages) assert.ok(page.length <= limit, `a page of limit ${limit} held ${page.length} runs`);
      assert.deepEqual(ids(pages.flat()), expected, `pages of ${limit} must list every run once, newest first`);
    }
  }),

  conformanceCase('list: the default page size is 50', async ({ store, t0 }) => {
    for (let i = 0; i < 51; i += 1) await createRun(store, t0 + i, { workflow: 'many' });
    const page = await store.runs.list({ workflow: 'many' });
    assert.equal(page.runs.length, 50);
    assert.ok(page.nextCursor, 'a 51st run follows, so the page needs a cursor');
    const next = await store.runs.list({ workflow: 'many', cursor: page.nextCursor });
    assert.equal(next.runs.length, 1);
    assert.equal(next.runs[0]?.createdAt, t0, 'the oldest run comes last');
  }),

  conformanceCase('list: a malformed cursor is INVALID_INPUT', async ({ store, t0 }) => {
    await createRun(store, t0);
    for (const cursor of ['not a cursor', '', Buffer.from('{"x":1}').toString('base64url'), '%%%']) {
      await rejectsWithCode(store.runs.list({ cursor }), 'INVALID_INPUT', `list with cursor ${JSON.stringify(cursor)}`);
    }
  }),

  conformanceCase('list: a limit outside 1..1000 or not an integer is INVALID_INPUT', async ({ store, t0 }) => {
    await createRun(store, t0);
    for (const limit of [0, -1, 1001, 1.5, Number.NaN]) {
      await rejectsWithCode(store.runs.list({ limit }), 'INVALID_INPUT', `list with limit ${limit}`);
    }
    assert.equal((await store.runs.list({ limit: 1000 })).runs.length, 1, 'limit 1000 is allowed');
  }),
];

const claim = [
  conformanceCase('claim: a pending run becomes running with fence 1, a lease, and wakeAt cleared', async ({ store, t0 }) => {
    const created = await createRun(store, t0, { wakeAt: t0 });
    const run = await store.runs.claim(created.id, 'worker-a', 5_000, t0 + 1);
    assert.ok(run);
    assert.equal(run.status, 'running');
    assert.equal(run.fence, 1);
    assert.deepEqual(run.lease, { owner: 'worker-a', expiresAt: t0 + 5_001 });
    assert.equal(run.wakeAt, undefined, 'claim clears wakeAt');
    assert.equal(run.updatedAt, t0 + 1);
    assertSameRecord(await store.runs.get(created.id), run, 'claim returns the stored run');
  }),

  conformanceCase('claim: a live lease of another owner refuses, writing nothing', async ({ store, t0 }) => {
    const { run } = await runningRun(store, t0, {}, 'worker-a');
    const before = await store.runs.get(run.id);
    assert.equal(await store.runs.claim(run.id, 'worker-b', LEASE_MS, t0 + LEASE_MS - 1), undefined);
    assert.deepEqual(await store.runs.get(run.id), before);
  }),

  conformanceCase('claim: an expired lease (expiresAt <= now) is taken over and the fence increments', async ({ store, t0 }) => {
    const { run } = await runningRun(store, t0, {}, 'worker-a');
    const taken = await store.runs.claim(run.id, 'worker-b', 1_000, t0 + LEASE_MS);
    assert.ok(taken, 'a lease expiring exactly now is expired');
    assert.equal(taken.fence, 2);
    assert.deepEqual(taken.lease, { owner: 'worker-b', expiresAt: t0 + LEASE_MS + 1_000 });
  }),

  conformanceCase('claim: the same owner may claim again while its lease lives, with a new fence', async ({ store, t0 }) => {
    const { run } = await runningRun(store, t0, {}, 'worker-a');
    const again = await store.runs.claim(run.id, 'worker-a', 1_000, t0 + 5);
    assert.ok(again);
    assert.equal(again.fence, 2);
    assert.deepEqual(again.lease, { owner: 'worker-a', expiresAt: t0 + 1_005 });
  }),

  conformanceCase('claim: a waiting run can be claimed', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.runs.transition(run.id, fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 100 }, t0 + 1);
    const again = await store.runs.claim(run.id, 'worker-b', LEASE_MS, t0 + 100);
    assert.ok(again);
    assert.equal(again.status, 'running');
    assert.equal(again.fence, 2);
    assert.equal(again.wakeAt, undefined);
  }),

  conformanceCase('claim: terminal and missing runs refuse, writing nothing', async ({ store, t0 }) => {
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      const run = await terminalRun(store, t0, status);
      const before = await store.runs.get(run.id);
      assert.equal(await store.runs.claim(run.id, 'worker-b', LEASE_MS, t0 + LEASE_MS * 2), undefined, `a ${status} run`);
      assert.deepEqual(await store.runs.get(run.id), before, `a ${status} run must not change`);
    }
    assert.equal(await store.runs.claim(uuidv7(), 'worker-b', LEASE_MS, t0), undefined);
  }),

  conformanceCase('claim: of 8 concurrent claimers exactly one wins', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    const owners = Array.from({ length: 8 }, (_, i) => `worker-${i}`);
    const results = await Promise.all(owners.map((o) => store.runs.claim(run.id, o, LEASE_MS, t0 + 1)));
    const winners = results.filter((r): r is RunRecord => r !== undefined);
    assert.equal(winners.length, 1, `exactly one claim must win, ${winners.length} did`);
    const stored = await store.runs.get(run.id);
    assert.equal(stored?.fence, 1, 'only one claim may increment the fence');
    assert.equal(stored?.lease?.owner, winners[0]?.lease?.owner);
  }),
];

const renew = [
  conformanceCase('renew: extends the lease and returns the run with cancelRequested', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.runs.requestCancel(run.id, t0 + 1);
    const renewed = await store.runs.renew(run.id, fence, 60_000, t0 + 10);
    assert.deepEqual(renewed.lease, { owner: 'worker-a', expiresAt: t0 + 60_010 });
    assert.equal(renewed.cancelRequested, true);
    assert.equal(renewed.fence, fence, 'renew keeps the fence');
    assert.deepEqual((await store.runs.get(run.id))?.lease, renewed.lease);
  }),

  conformanceCase('renew: a stale fence is LEASE_LOST and the new holder keeps its lease', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0, {}, 'worker-a');
    await takeOver(store, run.id, 'worker-b', t0 + LEASE_MS);
    const before = await store.runs.get(run.id);
    await rejectsWithCode(store.runs.renew(run.id, fence, 60_000, t0 + LEASE_MS + 1), 'LEASE_LOST');
    assert.deepEqual(await store.runs.get(run.id), before);
  }),

  conformanceCase('renew: a terminal run is LEASE_LOST', async ({ store, t0 }) => {
    const run = await terminalRun(store, t0);
    const before = await store.runs.get(run.id);
    await rejectsWithCode(store.runs.renew(run.id, run.fence, 60_000, t0 + 1), 'LEASE_LOST');
    assert.deepEqual(await store.runs.get(run.id), before);
  }),
];

const transition = [
  conformanceCase('transition: running → waiting releases the lease and sets wakeAt', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const waiting = await store.runs.transition(run.id, fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 500 }, t0 + 2);
    assert.equal(waiting.status, 'waiting');
    assert.equal(waiting.lease, undefined);
    assert.equal(waiting.wakeAt, t0 + 500);
    assert.equal(waiting.updatedAt, t0 + 2);
    assertSameRecord(await store.runs.get(run.id), waiting);
  }),

  conformanceCase('transition: to completed stores the output and clears lease and wakeAt', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.runs.wake(run.id, t0 + 1);
    const done = await store.runs.transition(run.id, fence, { from: ['running'], to: 'completed', output: { total: 12.5, ok: true } }, t0 + 2);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.output, { total: 12.5, ok: true });
    assert.equal(done.lease, undefined);
    assert.equal(done.wakeAt, undefined);
    assertSameRecord(await store.runs.get(run.id), done);
  }),

  conformanceCase('transition: to failed or cancelled stores the whole error record', async ({ store, t0 }) => {
    for (const to of ['failed', 'cancelled'] as const) {
      const { run, fence } = await runningRun(store, t0);
      const done = await store.runs.transition(run.id, fence, { from: ['running'], to, error: SAMPLE_ERROR }, t0 + 1);
      assert.equal(done.status, to);
      assertSameRecord((await store.runs.get(run.id))?.error, SAMPLE_ERROR);
      assert.equal((await store.runs.get(run.id))?.output, undefined);
    }
  }),

  conformanceCase('transition: a status outside `from` is RUN_CONFLICT and writes nothing', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const before = await snapshotRun(store, run.id);
    await rejectsWithCode(store.runs.transition(run.id, fence, { from: ['waiting', 'pending'], to: 'completed', output: 1 }, t0 + 1), 'RUN_CONFLICT');
    assert.deepEqual(await snapshotRun(store, run.id), before);
  }),

  conformanceCase('transition: a stale fence is LEASE_LOST and writes nothing', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0, {}, 'worker-a');
    await takeOver(store, run.id, 'worker-b', t0 + LEASE_MS);
    const before = await snapshotRun(store, run.id);
    await rejectsWithCode(store.runs.transition(run.id, fence, { from: ['running'], to: 'completed', output: 'stale' }, t0 + LEASE_MS + 1), 'LEASE_LOST');
    assert.deepEqual(await snapshotRun(store, run.id), before);
  }),

  conformanceCase('transition: a terminal run never changes (RUN_CONFLICT), even when `from` names its status', async ({ store, t0 }) => {
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      const run = await terminalRun(store, t0, status);
      const before = await snapshotRun(store, run.id);
      const everything: RunStatus[] = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'];
      for (const to of everything) {
        await rejectsWithCode(
          store.runs.transition(run.id, run.fence, { from: everything, to, output: 'overwritten', error: SAMPLE_ERROR }, t0 + 5),
          'RUN_CONFLICT',
          `${status} → ${to}`,
        );
      }
      assert.deepEqual(await snapshotRun(store, run.id), before, `the ${status} run must be untouched`);
    }
  }),

  conformanceCase('transition: waiting keeps a wake-up requested since the claim when it is earlier', async ({ store, t0 }) => {
    // An event delivered while the run executes must not be lost when the run goes to sleep.
    const a = await runningRun(store, t0);
    await store.runs.wake(a.run.id, t0 + 10);
    const waitingA = await store.runs.transition(a.run.id, a.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 60_000 }, t0 + 20);
    assert.equal(waitingA.wakeAt, t0 + 10, 'the earlier wake-up wins');

    const b = await runningRun(store, t0);
    await store.runs.wake(b.run.id, t0 + 10);
    const waitingB = await store.runs.transition(b.run.id, b.fence, { from: ['running'], to: 'waiting' }, t0 + 20);
    assert.equal(waitingB.wakeAt, t0 + 10, 'a wake-up survives a wait without a timer');

    const c = await runningRun(store, t0);
    await store.runs.wake(c.run.id, t0 + 10);
    const waitingC = await store.runs.transition(c.run.id, c.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 5 }, t0 + 20);
    assert.equal(waitingC.wakeAt, t0 + 5, 'an earlier timer wins');

    const d = await runningRun(store, t0, { wakeAt: t0 });
    const waitingD = await store.runs.transition(d.run.id, d.fence, { from: ['running'], to: 'waiting' }, t0 + 20);
    assert.equal(waitingD.wakeAt, undefined, 'the wakeAt cleared by the claim must not come back');
  }),

  ...FALSY_OUTPUTS.map(({ label, value }) =>
    conformanceCase(`transition: output ${label} round-trips exactly`, async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      const done = await store.runs.transition(
        run.id,
        fence,
        value === undefined ? { from: ['running'], to: 'completed' } : { from: ['running'], to: 'completed', output: value },
        t0 + 1,
      );
      const stored = await store.runs.get(run.id);
      assert.deepStrictEqual(done.output, value, 'as returned by transition');
      assert.deepStrictEqual(stored?.output, value, 'as read back by get');
      const listed = (await store.runs.list({ workflow: 'orders' })).runs[0];
      assert.equal(listed?.status, 'completed', 'list returns the run');
      assert.ok(listed !== undefined && !('output' in listed) && !('input' in listed), 'list returns a summary, without payloads');
    }),
  ),
];

const wake = [
  conformanceCase('wake: wakeAt becomes min(wakeAt, now)', async ({ store, t0 }) => {
    const run = await createRun(store, t0, { wakeAt: t0 + 100 });
    await store.runs.wake(run.id, t0 + 50);
    assert.equal((await store.runs.get(run.id))?.wakeAt, t0 + 50);
    await store.runs.wake(run.id, t0 + 80);
    assert.equal((await store.runs.get(run.id))?.wakeAt, t0 + 50, 'a later wake never postpones');
    const bare = await createRun(store, t0);
    await store.runs.wake(bare.id, t0 + 7);
    assert.equal((await store.runs.get(bare.id))?.wakeAt, t0 + 7, 'a run without wakeAt gets now');
  }),

  conformanceCase('wake: a no-op on terminal and missing runs', async ({ store, t0 }) => {
    const run = await terminalRun(store, t0);
    const before = await store.runs.get(run.id);
    await store.runs.wake(run.id, t0 + 5);
    assert.deepEqual(await store.runs.get(run.id), before);
    await store.runs.wake(uuidv7(), t0 + 5);
    assert.equal((await store.runs.list({})).runs.length, 1, 'waking a missing run creates nothing');
  }),
];

const requestCancel = [
  conformanceCase('requestCancel: sets cancelRequested and wakes the run, keeping its lease', async ({ store, t0 }) => {
    const pending = await createRun(store, t0, { wakeAt: t0 + 1_000 });
    const after = await store.runs.requestCancel(pending.id, t0 + 10);
    assert.equal(after?.cancelRequested, true);
    assert.equal(after?.wakeAt, t0 + 10);
    assertSameRecord(await store.runs.get(pending.id), after);

    const { run, fence } = await runningRun(store, t0);
    const cancelled = await store.runs.requestCancel(run.id, t0 + 10);
    assert.equal(cancelled?.status, 'running');
    assert.equal(cancelled?.fence, fence);
    assert.deepEqual(cancelled?.lease, run.lease);
    assert.equal(cancelled?.cancelRequested, true);
  }),

  conformanceCase("requestCancel: stores the first request's reason; later requests keep it; no reason stores none", async ({ store, t0 }) => {
    const reason = 'customer asked — ünïcode ✓ "quoted"';
    const { run, fence } = await runningRun(store, t0);
    const first = await store.runs.requestCancel(run.id, t0 + 10, reason);
    assert.equal(first?.cancelRequested, true);
    assert.equal(first?.cancelReason, reason);
    assert.equal((await store.runs.requestCancel(run.id, t0 + 11, 'second'))?.cancelReason, reason, 'a later reason does not replace the first');
    assert.equal((await store.runs.requestCancel(run.id, t0 + 12))?.cancelReason, reason, 'a later request without one keeps it');
    assert.equal((await store.runs.renew(run.id, fence, LEASE_MS, t0 + 13)).cancelReason, reason, 'renew returns it');
    const ended = await store.runs.transition(
      run.id,
      fence,
      { from: ['running'], to: 'cancelled', error: { name: 'CairnError', message: 'cancelled', code: 'CANCELLED' } },
      t0 + 14,
    );
    assert.equal(ended.cancelReason, reason, 'the terminal run keeps it');
    assert.equal((await store.runs.get(run.id))?.cancelReason, reason);

    const plain = await createRun(store, t0);
    assert.equal((await store.runs.requestCancel(plain.id, t0 + 10))?.cancelReason, undefined);
    assert.equal(
      (await store.runs.requestCancel(plain.id, t0 + 11, 'too late'))?.cancelReason,
      undefined,
      'a reason after a request without one is not stored',
    );
    const done = await terminalRun(store, t0);
    assert.equal((await store.runs.requestCancel(done.id, t0 + 5, 'after the end'))?.cancelReason, undefined, 'a terminal run stores no reason');
  }),

  conformanceCase('requestCancel: a terminal run is returned unchanged; a missing one is undefined', async ({ store, t0 }) => {
    const run = await terminalRun(store, t0);
    const before = await store.runs.get(run.id);
    const after = await store.runs.requestCancel(run.id, t0 + 5);
    assert.equal(after?.cancelRequested, false);
    assert.deepEqual(await store.runs.get(run.id), before);
    assert.equal(await store.runs.requestCancel(uuidv7(), t0), undefined);
  }),
];

const findDue = [
  conformanceCase('findDue: due timers and expired leases, earliest first; nothing else', async ({ store, t0 }) => {
    const now = t0 + 10;
    const dueNow = await createRun(store, t0 - 100, { workflow: 'a', wakeAt: now });
    const dueEarly = await createRun(store, t0, { workflow: 'b', wakeAt: t0 });
    await createRun(store, t0, { wakeAt: now + 1 }); // not yet due
    await createRun(store, t0); // no timer
    const waiting = await runningRun(store, t0, { workflow: 'c' });
    await store.runs.transition(waiting.run.id, waiting.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 5 }, t0);
    const eventWait = await runningRun(store, t0);
    await store.runs.transition(eventWait.run.id, eventWait.fence, { from: ['running'], to: 'waiting' }, t0); // waits for nothing timed
    const expired = await createRun(store, t0, { workflow: 'd' });
    await store.runs.claim(expired.id, 'worker-x', 12, t0 - 10); // lease ends at t0 + 2
    await store.runs.claim((await createRun(store, t0)).id, 'worker-y', LEASE_MS, t0); // live lease
    const done = await terminalRun(store, t0);
    await store.runs.wake(done.id, t0); // a no-op: terminal runs are never due

    const due = await store.runs.findDue(now, 100);
    assert.deepEqual(due, [
      { id: dueEarly.id, workflow: 'b', reason: 'wake' },
      { id: expired.id, workflow: 'd', reason: 'lease-expired' },
      { id: waiting.run.id, workflow: 'c', reason: 'wake' },
      { id: dueNow.id, workflow: 'a', reason: 'wake' },
    ]);
    assert.deepEqual(await store.runs.findDue(now, 2), due.slice(0, 2), 'limit keeps the earliest');
    assert.deepEqual(await store.runs.findDue(t0 - 1, 100), [], 'nothing is due before its time');
  }),
];

const remove = [
  conformanceCase('delete: a missing run is false', async ({ store }) => {
    assert.equal(await store.runs.delete(uuidv7()), false);
  }),

  conformanceCase('delete: removes the run, its steps, attempts, state and events; the key is free again', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0, { idempotencyKey: 'once' });
    await store.steps.insert(run.id, fence, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 2, worker: 'w' }, t0);
    await store.state.set(run.id, fence, 'k', 'v', t0);
    await store.events.deliver(run.id, 'approved', { by: 'me' }, t0);
    await store.events.deliver(run.id, 'approved', 'keyed', t0, { idempotencyKey: 'send-1' });
    const keep = await runningRun(store, t0, { idempotencyKey: 'other' });
    await store.steps.insert(keep.run.id, keep.fence, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 2, worker: 'w' }, t0);
    await store.state.set(keep.run.id, keep.fence, 'k', 'kept', t0);
    await store.events.deliver(keep.run.id, 'approved', 'kept', t0);
    const keptBefore = await snapshotRun(store, keep.run.id, ['approved']);

    assert.equal(await store.runs.delete(run.id), true);
    assert.equal(await store.runs.get(run.id), undefined);
    assert.deepEqual(await store.steps.load(run.id), []);
    assert.deepEqual(await store.history.list(run.id), []);
    assert.deepEqual(await store.state.get(run.id), {});
    assert.equal(await store.events.get(run.id, 'approved', 1), undefined);
    assert.deepEqual(ids((await store.runs.list({})).runs), [keep.run.id]);
    assert.deepEqual(await store.runs.findDue(t0 + LEASE_MS * 10, 100), [{ id: keep.run.id, workflow: 'orders', reason: 'lease-expired' }]);
    assert.equal(await store.runs.delete(run.id), false, 'a second delete finds nothing');
    assert.deepEqual(await snapshotRun(store, keep.run.id, ['approved']), keptBefore, 'other runs are untouched');

    const reused = await store.runs.create(newRun({ idempotencyKey: 'once' }), t0 + 1);
    assert.equal(reused.created, true, 'the idempotency key of a deleted run can be used again');
    // A run created again under the deleted id starts with no messages and no send keys.
    await store.runs.create(newRun({ id: run.id }), t0 + 2);
    assert.equal(await store.events.get(run.id, 'approved', 1), undefined);
    assert.deepEqual(await store.events.deliver(run.id, 'approved', 'new', t0 + 3, { idempotencyKey: 'send-1' }), {
      delivered: true,
      duplicate: false,
      seq: 1,
    });
  }),
];

/** Store contract: `runs`. */
export const runsGroup: CaseGroup = caseGroup('store.runs', 'store: runs', [
  ...create,
  ...get,
  ...list,
  ...claim,
  ...renew,
  ...transition,
  ...wake,
  ...requestCancel,
  ...findDue,
  ...remove,
]);
