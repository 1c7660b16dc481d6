import assert from 'node:assert/strict';
import type { RunQuery, RunSummary } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { createRun, runningRun } from '../fixtures/run-fixtures.js';

/** Every run a query finds, page by page (`limit` a page), newest first. */
async function listAll(store: WorkflowStore, query: RunQuery, limit = 1000): Promise<RunSummary[]> {
  const out: RunSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.runs.list({ ...query, limit, ...(cursor === undefined ? {} : { cursor }) });
    out.push(...page.runs);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return out;
}

const ids = (runs: readonly { id: string }[]) => runs.map((r) => r.id);

/** An object with `__proto__` as an own key (as JSON.parse makes it), not as the prototype. */
function tagsOf(entries: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of entries) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * Tag keys and values that break naive backends: SQL LIKE metacharacters (a tag must match only
 * itself), quotes, separators a composite key could be built with, unicode beyond the BMP, case
 * and padding (binary comparison), the longest allowed, and JavaScript's prototype names.
 */
export const HOSTILE_TAGS: ReadonlyArray<readonly [string, string]> = [
  ['customer', 'c-42'],
  ['Customer', 'C-42'],
  ['pct%', '100%'],
  ['under_score', 'a_c'],
  ['quote\'"`\\', "'; DROP TABLE runs; --"],
  ['ünï 客户 🏷️ 𝄞', 'wert ✓ 𝄞'],
  ['sep:=,{}', 'a:b=c,{x}'],
  ['pad ', ' pad'],
  ['__proto__', 'proto'],
  ['constructor', 'toString'],
  ['k'.repeat(64), 'v'.repeat(256)],
  ['empty', ''],
  ['tab\tnl\n', 'line\nbreak\r\n'],
];

/** The tag capability of the store contract (`runs.setTags`, `NewRun.tags`, `RunQuery.tags`). */
export const tagsGroup: CaseGroup = caseGroup('store.tags', 'store: run tags and the tag index', [
  conformanceCase(
    'runs created with tags are found by one tag, by several (AND), with the other filters, page by page',
    async (env) => {
      const { store, t0 } = env;
      const a = await createRun(store, t0, { workflow: 'orders', tags: { customer: 'c-42', plan: 'pro' } });
      const b = await createRun(store, t0 + 1, { workflow: 'orders', tags: { customer: 'c-42', plan: 'free' } });
      const c = await createRun(store, t0 + 2, { workflow: 'refunds', tags: { customer: 'c-42' } });
      const d = await createRun(store, t0 + 3, { workflow: 'orders', tags: { customer: 'c-43', plan: 'pro' } });
      const none = await createRun(store, t0 + 4, { workflow: 'orders' });
      assert.deepEqual((await store.runs.get(a.id))?.tags, { customer: 'c-42', plan: 'pro' });
      assert.equal((await store.runs.get(none.id))?.tags, undefined, 'a run without tags has none');
      assert.deepEqual(a.tags, { customer: 'c-42', plan: 'pro' }, 'create returns the tags');

      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'c-42' } })), [c.id, b.id, a.id]);
      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'c-42', plan: 'pro' } })), [a.id], 'AND over the tags');
      assert.deepEqual(ids(await listAll(store, { tags: { plan: 'pro' } })), [d.id, a.id]);
      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'c-42' }, workflow: 'orders' })), [b.id, a.id], 'with the workflow filter');
      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'c-42' }, status: ['pending'] })), [c.id, b.id, a.id], 'with the status filter');
      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'c-42' }, status: 'running' })), []);
      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'c-42' }, createdAfter: t0 + 1, createdBefore: t0 + 2 })), [b.id], 'with the time range');
      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'c-42' } }, 1)), [c.id, b.id, a.id], 'one run a page, by cursor');
      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'c-4' } })), [], 'a prefix is not the value');
      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'c-42', nope: 'x' } })), [], 'a tag no run has');
      assert.deepEqual(ids(await listAll(store, { tags: { plan: 'c-42' } })), [], 'a value under another key');
      const summary = (await store.runs.list({ tags: { customer: 'c-43' } })).runs[0];
      assert.deepEqual(summary?.tags, { customer: 'c-43', plan: 'pro' }, 'a summary carries the tags');
    },
    { requires: ['tags'] },
  ),

  conformanceCase(
    'tags with every other filter, page by page: several statuses, workflow and status, idempotency key, hostile tags (each listing equals the filter applied to every run)',
    async (env) => {
      const { store, t0 } = env;
      // 24 runs over two workflows, three statuses and three tag sets; one has an idempotency key.
      // (Children are listed by parent through the parent's child steps on some backends, so no parent filter here.)
      const hostile = tagsOf([HOSTILE_TAGS[2]!, HOSTILE_TAGS[4]!]);
      const tagSets = [{ customer: 'c-42', plan: 'pro' }, { customer: 'c-42', plan: 'free' }, hostile];
      const made: Array<{ id: string; workflow: string; status: string; tags: Record<string, string>; key?: string }> = [];
      for (let i = 0; i < 24; i++) {
        const workflow = i % 2 === 0 ? 'orders' : 'refunds';
        const tags = tagSets[i % 3]!;
        const key = i === 7 ? 'idem-7' : undefined;
        // Equal creation times in pairs: the page order falls back to the id.
        const run = await createRun(store, t0 + 10 + Math.floor(i / 2), { workflow, tags, ...(key === undefined ? {} : { idempotencyKey: key }) });
        let status = 'pending';
        if (i % 3 !== 0) {
          const claimed = await store.runs.claim(run.id, 'worker-a', 60_000, t0 + 100);
          assert.ok(claimed);
          status = 'running';
          if (i % 3 === 2) {
            await store.runs.transition(run.id, claimed.fence, { from: ['running'], to: 'completed', output: null }, t0 + 101);
            status = 'completed';
          }
        }
        made.push({ id: run.id, workflow, status, tags, ...(key === undefined ? {} : { key }) });
      }
      // Newest first, ties by id descending: the store's order, computed from what was made.
      const order = new Map((await listAll(store, {})).map((r, i) => [r.id, i]));
      const expect = (pick: (r: (typeof made)[number]) => boolean) =>
        made
          .filter(pick)
          .map((r) => r.id)
          .sort((x, y) => order.get(x)! - order.get(y)!);
      const has = (r: (typeof made)[number], tags: Record<string, string>) => Object.entries(tags).every(([k, v]) => r.tags[k] === v);
      const cases: Array<[string, RunQuery, (r: (typeof made)[number]) => boolean]> = [
        [
          'one tag, two statuses',
          { tags: { customer: 'c-42' }, status: ['pending', 'completed'] },
          (r) => has(r, { customer: 'c-42' }) && r.status !== 'running',
        ],
        [
          'two tags, one status',
          { tags: { customer: 'c-42', plan: 'free' }, status: 'running' },
          (r) => has(r, { customer: 'c-42', plan: 'free' }) && r.status === 'running',
        ],
        [
          'tag, workflow and status',
          { tags: { plan: 'pro' }, workflow: 'orders', status: 'pending' },
          (r) => has(r, { plan: 'pro' }) && r.workflow === 'orders' && r.status === 'pending',
        ],
        ['tag and workflow', { tags: { customer: 'c-42' }, workflow: 'refunds' }, (r) => has(r, { customer: 'c-42' }) && r.workflow === 'refunds'],
        [
          'tag, workflow and idempotency key',
          { tags: { customer: 'c-42' }, workflow: 'refunds', idempotencyKey: 'idem-7' },
          (r) => has(r, { customer: 'c-42' }) && r.key === 'idem-7',
        ],
        ['hostile tags and three statuses', { tags: hostile, status: ['pending', 'running', 'completed'] }, (r) => has(r, hostile)],
        ['hostile tags and a status', { tags: hostile, status: 'running' }, (r) => has(r, hostile) && r.status === 'running'],
      ];
      for (const [label, query, pick] of cases) {
        const want = expect(pick);
        assert.deepEqual(ids(await listAll(store, query)), want, `${label}: one page`);
        assert.deepEqual(ids(await listAll(store, query, 1)), want, `${label}: a run a page`);
        assert.deepEqual(ids(await listAll(store, query, 2)), want, `${label}: two runs a page`);
      }
    },
    { requires: ['tags'] },
  ),

  conformanceCase(
    'hostile tag keys and values round-trip exactly and each finds only its own run (LIKE metacharacters, quotes, unicode, case, __proto__, the longest)',
    async (env) => {
      const { store, t0 } = env;
      const all = tagsOf(HOSTILE_TAGS);
      const run = await createRun(store, t0, { tags: all });
      const got = await store.runs.get(run.id);
      assert.deepEqual(Object.entries(got?.tags ?? {}).sort(), Object.entries(all).sort(), 'every tag round-trips byte for byte');
      assert.equal(Object.getPrototypeOf(got?.tags), Object.prototype, '__proto__ is a key, not the prototype');
      // One run per tag, and decoys that a LIKE pattern, a case-folding or a padding-blind compare would match.
      const single = new Map<string, string>();
      for (const [key, value] of HOSTILE_TAGS) single.set(`${key}\u0001${value}`, (await createRun(store, t0 + 1, { tags: tagsOf([[key, value]]) })).id);
      const decoys = [
        ['pct%', '100x'],
        ['pctx', '100%'],
        ['under_score', 'abc'],
        ['underxscore', 'a_c'],
        ['customer', 'C-42'],
        ['pad', ' pad'],
        ['pad ', 'pad'],
        ['k'.repeat(63), 'v'.repeat(256)],
      ] as const;
      for (const [key, value] of decoys) await createRun(store, t0 + 2, { tags: tagsOf([[key, value]]) });
      for (const [key, value] of HOSTILE_TAGS) {
        const found = ids(await listAll(store, { tags: tagsOf([[key, value]]) }));
        assert.deepEqual(
          found.sort(),
          [single.get(`${key}\u0001${value}`), run.id].sort(),
          `tag ${JSON.stringify(key)}=${JSON.stringify(value)} finds its runs only`,
        );
      }
      assert.deepEqual(ids(await listAll(store, { tags: all })), [run.id], 'all of them at once');
    },
    { requires: ['tags'] },
  ),

  conformanceCase(
    'runs.setTags applies each write once, in order: a replayed place writes nothing, a gap or a stale fence is refused, the index follows a changed value',
    async (env) => {
      const { store, t0 } = env;
      const setTags = store.runs.setTags!.bind(store.runs);
      const { run, fence } = await runningRun(store, t0, { tags: { stage: 'new', customer: 'c-1' } });
      assert.deepEqual(await setTags(run.id, fence, { seq: 0, tags: { stage: 'paid' } }, t0 + 1), { applied: true });
      assert.deepEqual(await setTags(run.id, fence, { seq: 1, tags: { stage: 'shipped', carrier: 'ups' } }, t0 + 2), { applied: true });
      // A replay's first call again: its place is taken, and the later write stays.
      assert.deepEqual(await setTags(run.id, fence, { seq: 0, tags: { stage: 'paid' } }, t0 + 3), { applied: false });
      const after = await store.runs.get(run.id);
      assert.deepEqual(after?.tags, { stage: 'shipped', customer: 'c-1', carrier: 'ups' });
      assert.equal(after?.tagWrites, 2);
      assert.deepEqual(ids(await listAll(store, { tags: { stage: 'shipped' } })), [run.id]);
      assert.deepEqual(ids(await listAll(store, { tags: { stage: 'paid' } })), [], 'the old value finds the run no more');
      assert.deepEqual(ids(await listAll(store, { tags: { stage: 'new' } })), []);
      assert.deepEqual(ids(await listAll(store, { tags: { carrier: 'ups', customer: 'c-1' } })), [run.id]);
      await rejectsWithCode(setTags(run.id, fence, { seq: 5, tags: { stage: 'lost' } }, t0 + 4), 'RUN_CONFLICT', 'a write after a missing one');
      await rejectsWithCode(setTags(run.id, fence + 1, { seq: 2, tags: { stage: 'stale' } }, t0 + 4), 'LEASE_LOST', 'a stale fence');
      await rejectsWithCode(setTags('no-such-run', fence, { seq: 0, tags: { a: 'b' } }, t0 + 4), 'RUN_NOT_FOUND', 'a missing run');
      assert.deepEqual((await store.runs.get(run.id))?.tags, { stage: 'shipped', customer: 'c-1', carrier: 'ups' }, 'refused writes changed nothing');
      await store.runs.transition(run.id, fence, { from: ['running'], to: 'completed', output: null }, t0 + 5);
      await rejectsWithCode(setTags(run.id, fence, { seq: 2, tags: { stage: 'late' } }, t0 + 6), 'RUN_CONFLICT', 'a write to an ended run');
      assert.equal((await store.runs.get(run.id))?.tags?.['stage'], 'shipped');
    },
    { requires: ['tags'] },
  ),

  conformanceCase(
    'a deleted run leaves the tag index: runs.delete and runs.deleteMany',
    async (env) => {
      const { store, t0 } = env;
      const ended = async (tags: Record<string, string>) => {
        const { run, fence } = await runningRun(store, t0, { tags });
        await store.runs.setTags!(run.id, fence, { seq: 0, tags: { phase: 'done' } }, t0);
        return store.runs.transition(run.id, fence, { from: ['running'], to: 'completed', output: 1 }, t0);
      };
      const one = await ended({ customer: 'gone', n: '1' });
      const two = await ended({ customer: 'gone', n: '2' });
      const kept = await ended({ customer: 'gone', n: '3' });
      assert.equal(await store.runs.delete(one.id), true);
      if (store.runs.deleteMany !== undefined)
        assert.deepEqual(await store.runs.deleteMany([two.id], { statuses: ['completed'], updatedBefore: t0 + 1 }), [two.id]);
      else assert.equal(await store.runs.delete(two.id), true);
      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'gone' } })), [kept.id]);
      assert.deepEqual(ids(await listAll(store, { tags: { phase: 'done' } })), [kept.id]);
      assert.deepEqual(ids(await listAll(store, { tags: { n: '1' } })), []);
      // The same id made again has only its own tags.
      const again = await createRun(store, t0 + 1, { id: one.id, tags: { customer: 'back' } });
      assert.deepEqual(again.tags, { customer: 'back' });
      assert.deepEqual(ids(await listAll(store, { tags: { n: '1' } })), []);
      assert.deepEqual(ids(await listAll(store, { tags: { customer: 'back' } })), [one.id]);
    },
    { requires: ['tags'] },
  ),
]);
