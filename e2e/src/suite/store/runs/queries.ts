import assert from 'node:assert/strict';
import type { RunPage, RunRecord, RunSummary } from '@cairn/core';
import { conformanceCase, type ConformanceCase } from '../../case.js';
import { rejectsWithCode } from '../../fixtures/assertions.js';
import { createRun, runningRun, shuffled, idsOf } from '../../fixtures/run-fixtures.js';
import { uuidv7 } from '../../fixtures/uuid-v7.js';

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

/** Store contract: `runs.get` and `runs.list`: reading runs, filters, order and pagination. */
export const runQueryCases: ConformanceCase[] = [
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
  conformanceCase('list: newest first by createdAt, then id, whatever the insertion order', async ({ store, t0 }) => {
    // The later run gets the smaller id, so ordering by id alone would be caught.
    const [small, large] = [uuidv7(), uuidv7()];
    const older = await createRun(store, t0, { id: large! });
    const newer = await createRun(store, t0 + 10, { id: small! });
    assert.deepEqual(idsOf((await store.runs.list({})).runs), [newer.id, older.id]);
  }),

  conformanceCase('list: filters by workflow, status (one or several) and creation time', async ({ store, t0 }) => {
    const a0 = await createRun(store, t0, { workflow: 'a' });
    const a1 = await runningRun(store, t0 + 10, { workflow: 'a' });
    const a2 = await createRun(store, t0 + 20, { workflow: 'a' });
    const b0 = await createRun(store, t0 + 10, { workflow: 'b' });
    const done = await runningRun(store, t0 + 30, { workflow: 'b' });
    await store.runs.transition(done.run.id, done.fence, { from: ['running'], to: 'completed', output: 1 }, t0 + 31);

    assert.deepEqual(idsOf((await store.runs.list({ workflow: 'a' })).runs), [a2.id, a1.run.id, a0.id]);
    assert.deepEqual(idsOf((await store.runs.list({ status: 'pending' })).runs), [a2.id, b0.id, a0.id]);
    assert.deepEqual(idsOf((await store.runs.list({ status: ['running', 'completed'] })).runs), [done.run.id, a1.run.id]);
    assert.deepEqual(idsOf((await store.runs.list({ workflow: 'a', status: 'pending' })).runs), [a2.id, a0.id]);
    assert.deepEqual(idsOf((await store.runs.list({ workflow: 'a', createdAfter: t0 + 10 })).runs), [a2.id, a1.run.id], 'createdAfter is inclusive');
    assert.deepEqual(idsOf((await store.runs.list({ workflow: 'a', createdBefore: t0 + 20 })).runs), [a1.run.id, a0.id], 'createdBefore is exclusive');
    assert.deepEqual(
      idsOf((await store.runs.list({ createdAfter: t0 + 10, createdBefore: t0 + 20 })).runs),
      idsOf([a1.run, b0].sort(newestFirst)),
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
    const expected = idsOf([...created].sort(newestFirst));

    for (const limit of [1, 3, 4, 11]) {
      const pages = await allPages((cursor) => store.runs.list({ workflow: 'paged', limit, ...(cursor === undefined ? {} : { cursor }) }));
      for (const page of pages) assert.ok(page.length <= limit, `a page of limit ${limit} held ${page.length} runs`);
      assert.deepEqual(idsOf(pages.flat()), expected, `pages of ${limit} must list every run once, newest first`);
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
