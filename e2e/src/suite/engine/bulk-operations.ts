import assert from 'node:assert/strict';
import { CairnError, defineWorkflow, type RunRecord } from '@cairn/core';
import { countingStore, type StoreCall, type StoreCallForward, type BulkFilter } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld, WORLD_TIMINGS, type EngineWorld } from './engine-world.js';

/** What a test run does: fail at once with an error code, complete at once, or wait for `go`. */
type Plan = { fail?: string; done?: boolean };

const handler = async (ctx: { waitForEvent(name: string): Promise<unknown> }, raw: unknown) => {
  const input = raw as Plan;
  if (input.fail !== undefined) throw Object.assign(new Error(`declined: ${input.fail}`), { code: input.fail });
  if (input.done === true) return 'done';
  await ctx.waitForEvent('go');
  return 'went';
};
const order = (version: string) => defineWorkflow('bulk-order', async (ctx, input) => handler(ctx, input), { version });
const other = defineWorkflow('bulk-other', async (ctx, input) => handler(ctx, input));
const WORKFLOWS = [order('v1'), order('v2'), other];

async function world(env: CaseEnv): Promise<EngineWorld> {
  return engineWorld(env, WORKFLOWS);
}

/** Starts a run and lets it reach where its plan stops (waiting, failed or completed). */
async function started(w: EngineWorld, workflow: string, plan: Plan, version?: string): Promise<string> {
  const handle = await w.engine.startRun(workflow, plan, version === undefined ? {} : { version });
  await w.runUntil(`run ${handle.id} settles`, async () => {
    const run = await w.raw.runs.get(handle.id);
    return run !== undefined && run.status !== 'pending' && run.status !== 'running';
  });
  return handle.id;
}

const snapshot = async (w: EngineWorld, ids: readonly string[]) => Promise.all(ids.map(async (id) => w.raw.runs.get(id)));

function assertUntouched(before: readonly (RunRecord | undefined)[], after: readonly (RunRecord | undefined)[], what: string) {
  for (const [i, run] of before.entries()) {
    assert.ok(run, `${what} ${i} exists before`);
    assert.deepEqual(after[i], run, `${what} ${i} (${run.workflow} ${run.version} ${run.status}) is untouched`);
  }
}

/** Engine scenarios of `engine.bulk` (docs/operating.md, "Bulk operations"). */
export const bulkOperationsGroup: CaseGroup = caseGroup('engine.bulk', 'engine: bulk operations', [
  conformanceCase(
    'a bulk cancel acts on every run of the filter, page by page, and never on a decoy that differs in one field',
    async (env) => {
      const w = await world(env);
      const tooEarly = await started(w, 'bulk-order', {}, 'v2');
      await w.clock.advance(1000);
      const createdAfter = w.clock.now();
      const matching: string[] = [];
      for (let i = 0; i < 5; i += 1) matching.push(await started(w, 'bulk-order', {}, 'v2'));
      const otherWorkflow = await started(w, 'bulk-other', {});
      const otherVersion = await started(w, 'bulk-order', {}, 'v1');
      await w.clock.advance(1000);
      const createdBefore = w.clock.now();
      const tooLate = await started(w, 'bulk-order', {}, 'v2');
      const decoys = [tooEarly, otherWorkflow, otherVersion, tooLate];
      const before = await snapshot(w, decoys);
      const filter: BulkFilter = { workflow: 'bulk-order', version: 'v2', status: ['waiting'], createdAfter, createdBefore };
      const pages: number[] = [];
      const result = await w.engine.bulk({ filter, action: 'cancel', reason: 'customer left', pageSize: 2, onProgress: (p) => pages.push(p.pages) });
      assert.deepEqual(result.counts, { matched: 5, done: 5, skipped: 0, failed: 0 });
      assert.deepEqual(result.outcomes.map((o) => o.runId).sort(), [...matching].sort());
      assert.ok(result.outcomes.every((o) => o.outcome === 'done'));
      assert.ok(pages.length >= 3, `progress after each page (${pages.join(',')})`);
      assert.deepEqual(
        pages,
        pages.map((_, i) => i + 1),
      );
      const stored = await w.engine.getBulk(result.operation!.id);
      assert.equal(stored?.state, 'completed');
      assert.deepEqual(stored?.filter, filter);
      assert.deepEqual(stored?.counts, result.counts);
      assert.equal(stored?.owner, undefined, 'a completed operation has no owner');
      for (const id of matching) {
        const run = await w.runToEnd(id);
        assert.equal(run.status, 'cancelled');
        assert.equal(run.cancelReason, 'customer left');
      }
      await w.settle();
      assertUntouched(before, await snapshot(w, decoys), 'decoy');
    },
    { requires: ['bulk'] },
  ),

  conformanceCase(
    'a bulk delete by error code, status and time deletes exactly the matching ended runs; decoys that differ in one field stay',
    async (env) => {
      const w = await world(env);
      const tooEarly = await started(w, 'bulk-order', { fail: 'PAYMENT' }, 'v2');
      await w.clock.advance(1000);
      const createdAfter = w.clock.now();
      const matching: string[] = [];
      for (let i = 0; i < 4; i += 1) matching.push(await started(w, 'bulk-order', { fail: 'PAYMENT' }, 'v2'));
      const otherCode = await started(w, 'bulk-order', { fail: 'FRAUD' }, 'v2');
      const otherWorkflow = await started(w, 'bulk-other', { fail: 'PAYMENT' });
      const otherVersion = await started(w, 'bulk-order', { fail: 'PAYMENT' }, 'v1');
      await w.clock.advance(1000);
      const createdBefore = w.clock.now();
      const tooLate = await started(w, 'bulk-order', { fail: 'PAYMENT' }, 'v2');
      const decoys = [tooEarly, otherCode, otherWorkflow, otherVersion, tooLate];
      const failed = await w.raw.runs.get(matching[0]!);
      assert.equal(failed?.status, 'failed');
      assert.equal(failed?.error?.code, 'PAYMENT', 'the run keeps the code its handler threw');
      const before = await snapshot(w, decoys);
      const filter: BulkFilter = { workflow: 'bulk-order', version: 'v2', status: ['failed'], errorCode: 'PAYMENT', createdAfter, createdBefore };
      const dry = await w.engine.bulk({ filter, action: 'delete', dryRun: true });
      assert.deepEqual([dry.counts.matched, dry.applicable], [4, 4]);
      const result = await w.engine.bulk({ filter, action: 'delete', pageSize: 3 });
      assert.deepEqual(result.counts, { matched: 4, done: 4, skipped: 0, failed: 0 });
      for (const id of matching) assert.equal(await w.raw.runs.get(id), undefined, `run ${id} was deleted`);
      assertUntouched(before, await snapshot(w, decoys), 'decoy');

      // The status decoy: a failed run beside completed ones, with a filter on 'completed'.
      const completed = [await started(w, 'bulk-other', { done: true }), await started(w, 'bulk-other', { done: true })];
      const failedDecoy = await snapshot(w, [otherWorkflow]);
      const byStatus = await w.engine.bulk({ filter: { workflow: 'bulk-other', status: ['completed'] }, action: 'delete', pageSize: 1 });
      assert.deepEqual(byStatus.counts, { matched: 2, done: 2, skipped: 0, failed: 0 });
      for (const id of completed) assert.equal(await w.raw.runs.get(id), undefined);
      assertUntouched(failedDecoy, await snapshot(w, [otherWorkflow]), 'status decoy');
    },
    { requires: ['bulk'] },
  ),

  conformanceCase(
    'a bulk cancel by tags acts only on runs carrying every tag with that value; decoys that differ in one tag stay',
    async (env) => {
      const w = await world(env);
      const tagged = async (tags: Record<string, string>) => {
        const handle = await w.engine.startRun('bulk-order', {}, { tags });
        await w.runUntil(`run ${handle.id} waits`, async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
        return handle.id;
      };
      const matching = [await tagged({ customer: 'c-42', plan: 'pro' }), await tagged({ customer: 'c-42', plan: 'pro', region: 'eu' })];
      const decoys = [
        await tagged({ customer: 'c-43', plan: 'pro' }),
        await tagged({ customer: 'c-42', plan: 'free' }),
        await tagged({ customer: 'c-42' }),
        await tagged({ Customer: 'c-42', plan: 'pro' }),
        await started(w, 'bulk-order', {}),
      ];
      const before = await snapshot(w, decoys);
      const filter: BulkFilter = { workflow: 'bulk-order', tags: { customer: 'c-42', plan: 'pro' } };
      const dry = await w.engine.bulk({ filter, action: 'cancel', dryRun: true });
      assert.equal(dry.counts.matched, 2);
      const result = await w.engine.bulk({ filter, action: 'cancel', pageSize: 1 });
      assert.deepEqual(result.counts, { matched: 2, done: 2, skipped: 0, failed: 0 });
      assert.deepEqual(result.outcomes.map((o) => o.runId).sort(), [...matching].sort());
      for (const id of matching) assert.equal((await w.runToEnd(id)).status, 'cancelled');
      await w.settle();
      assertUntouched(before, await snapshot(w, decoys), 'decoy');
    },
    { requires: ['bulk', 'tags'] },
  ),

  conformanceCase(
    'runIds names the runs (a selection): only those are read and acted on, and only where every other field matches too',
    async (env) => {
      const w = await world(env);
      const named = [await started(w, 'bulk-order', {}, 'v2'), await started(w, 'bulk-order', {}, 'v2'), await started(w, 'bulk-order', {}, 'v2')];
      const notNamed = await started(w, 'bulk-order', {}, 'v2');
      const namedOtherWorkflow = await started(w, 'bulk-other', {});
      const before = await snapshot(w, [notNamed, namedOtherWorkflow]);
      const result = await w.engine.bulk({
        filter: { workflow: 'bulk-order', runIds: [...named, namedOtherWorkflow, '00000000-0000-7000-8000-000000000000'] },
        action: 'cancel',
        pageSize: 2,
      });
      assert.deepEqual(result.counts, { matched: 3, done: 3, skipped: 0, failed: 0 });
      assert.deepEqual(
        result.outcomes.map((o) => o.runId),
        named,
        'in the order given',
      );
      for (const id of named) assert.equal((await w.runToEnd(id)).status, 'cancelled');
      await w.settle();
      assertUntouched(before, await snapshot(w, [notNamed, namedOtherWorkflow]), 'decoy');
    },
    { requires: ['bulk'] },
  ),

  conformanceCase('a dry run counts the matched runs and those the action applies to, and writes nothing (on any store)', async (env) => {
    const w = await world(env);
    const waiting = [await started(w, 'bulk-other', {}), await started(w, 'bulk-other', {})];
    await started(w, 'bulk-other', { done: true });
    await started(w, 'bulk-order', {}, 'v2');
    await w.settle();
    w.store.reset();
    const cancel = await w.engine.bulk({ filter: { workflow: 'bulk-other' }, action: 'cancel', dryRun: true });
    assert.deepEqual(cancel.counts, { matched: 3, done: 0, skipped: 0, failed: 0 });
    assert.equal(cancel.applicable, 2);
    assert.equal(cancel.operation, undefined);
    const del = await w.engine.bulk({ filter: { workflow: 'bulk-other' }, action: 'delete', dryRun: true });
    assert.equal(del.applicable, 1);
    assert.deepEqual(w.store.writes(), [], 'a dry run writes nothing');
    if (w.raw.bulk) assert.deepEqual(await w.raw.bulk.list({ limit: 10 }), [], 'a dry run stores no operation');
    for (const id of waiting) assert.equal((await w.raw.runs.get(id))?.cancelRequested, false);
  }),

  conformanceCase(
    'a bulk operation whose process crashed after acting on a page is taken up where it stopped: every run acted on, none twice',
    async (env) => {
      const w = await world(env);
      const decoy = await started(w, 'bulk-other', {});
      const runs: string[] = [];
      for (let i = 0; i < 7; i += 1) runs.push(await started(w, 'bulk-order', {}, 'v2'));
      const before = await snapshot(w, [decoy]);
      let hits = 0;
      const crashing = await w.startEngine(WORKFLOWS, {
        noWorkers: true,
        faults: {
          hit: (site) => {
            if (site.point === 'bulk-page' && ++hits === 2) throw new Error('simulated crash after the second page');
          },
        },
      });
      const reasons: string[] = [];
      await assert.rejects(
        crashing.bulk({ filter: { workflow: 'bulk-order' }, action: 'cancel', pageSize: 3, onProgress: (p) => reasons.push(`${p.pages}`) }),
        /simulated crash/,
      );
      const [stored] = await w.engine.listBulk();
      assert.ok(stored, 'the operation is in the store');
      assert.equal(stored.state, 'running');
      assert.equal(stored.pages, 1, 'the second page was acted on, its progress not stored');
      assert.deepEqual(stored.counts, { matched: 3, done: 3, skipped: 0, failed: 0 });
      const busy = await rejectsWithCode(w.engine.resumeBulk(stored.id), 'BULK_BUSY', 'a resume while the owner may be alive');
      assert.equal((busy.data as { id?: string }).id, stored.id);
      await w.clock.advance(WORLD_TIMINGS.leaseMs + 1);
      const resumed = await w.engine.resumeBulk(stored.id);
      // The crashed page is acted on again: its runs were cancelled by the crashed process, so skipped.
      assert.deepEqual(resumed.counts, { matched: 7, done: 4, skipped: 3, failed: 0 });
      assert.equal(resumed.operation?.state, 'completed');
      assert.deepEqual(resumed.outcomes.filter((o) => o.outcome === 'skipped').length, 3, 'the page under way at the crash is reported skipped this time');
      for (const id of runs) assert.equal((await w.runToEnd(id)).status, 'cancelled');
      await w.settle();
      assertUntouched(before, await snapshot(w, [decoy]), 'decoy');
      const again = await w.engine.resumeBulk(stored.id);
      assert.deepEqual(again.outcomes, [], 'a completed operation is returned as it is');
      assert.deepEqual(again.counts, resumed.counts);
    },
    { requires: ['bulk'] },
  ),

  conformanceCase(
    'a run that completes between the listing and the cancel is skipped, not failed',
    async (env) => {
      const w = await world(env);
      const first = await started(w, 'bulk-other', {});
      const second = await started(w, 'bulk-other', {});
      let raced = false;
      const around = async (call: StoreCall, forward: StoreCallForward, args: unknown[]) => {
        const value = await forward(...args);
        if (call.method === 'runs.list' && !raced) {
          raced = true;
          // The newest is listed first: complete it after it was listed, before the action reaches it.
          await w.engine.sendEvent(second, 'go', null);
          for (let i = 0; i < 5000 && (await w.raw.runs.get(second))?.status !== 'completed'; i += 1) await new Promise((r) => setTimeout(r, 1));
        }
        return value;
      };
      const acting = await w.startEngine(WORKFLOWS, { noWorkers: true, store: countingStore(env.store, { around }) });
      const result = await acting.bulk({ filter: { workflow: 'bulk-other' }, action: 'cancel' });
      assert.equal(raced, true);
      assert.equal((await w.raw.runs.get(second))?.status, 'completed');
      assert.deepEqual(result.counts, { matched: 2, done: 1, skipped: 1, failed: 0 });
      assert.deepEqual(Object.fromEntries(result.outcomes.map((o) => [o.runId, o.outcome])), { [first]: 'done', [second]: 'skipped' });
      assert.equal((await w.runToEnd(first)).status, 'cancelled');
    },
    { requires: ['bulk'] },
  ),

  conformanceCase(
    'retry, pause and resume in bulk act through their own checks: done where they apply, skipped elsewhere',
    async (env) => {
      const w = await world(env);
      const payment = [await started(w, 'bulk-order', { fail: 'PAYMENT' }, 'v2'), await started(w, 'bulk-order', { fail: 'PAYMENT' }, 'v2')];
      const fraud = await started(w, 'bulk-order', { fail: 'FRAUD' }, 'v2');
      const retried = await w.engine.bulk({ filter: { workflow: 'bulk-order', errorCode: 'PAYMENT' }, action: 'retry', reason: 'gateway back' });
      assert.deepEqual(retried.counts, { matched: 2, done: 2, skipped: 0, failed: 0 });
      for (const id of payment) assert.equal((await w.raw.runs.get(id))?.retries?.[0]?.reason, 'gateway back');
      assert.equal((await w.raw.runs.get(fraud))?.retries, undefined, 'the other code is not retried');
      for (const id of payment) await w.runToEnd(id);

      const waiting = [await started(w, 'bulk-other', {}), await started(w, 'bulk-other', {})];
      const ended = await started(w, 'bulk-other', { done: true });
      const paused = await w.engine.bulk({ filter: { workflow: 'bulk-other' }, action: 'pause' });
      assert.deepEqual(paused.counts, { matched: 3, done: 2, skipped: 1, failed: 0 });
      assert.equal(paused.outcomes.find((o) => o.runId === ended)?.outcome, 'skipped');
      for (const id of waiting) assert.equal((await w.raw.runs.get(id))?.paused?.scope, 'run');
      const pausedAgain = await w.engine.bulk({ filter: { workflow: 'bulk-other' }, action: 'pause' });
      assert.deepEqual(pausedAgain.counts, { matched: 3, done: 0, skipped: 3, failed: 0 }, 'a paused run is skipped');
      const resumed = await w.engine.bulk({ filter: { workflow: 'bulk-other', status: ['waiting'] }, action: 'resume' });
      assert.deepEqual(resumed.counts, { matched: 2, done: 2, skipped: 0, failed: 0 });
      for (const id of waiting) assert.equal((await w.raw.runs.get(id))?.paused, undefined);
    },
    { requires: ['bulk', 'pauses'] },
  ),

  conformanceCase('bad options are refused with INVALID_INPUT before anything is read or written', async (env) => {
    const w = await world(env);
    await started(w, 'bulk-other', {});
    const bad: unknown[] = [
      undefined,
      {},
      { filter: {}, action: 'explode' },
      { action: 'cancel' },
      { filter: { workflow: 'x', colour: 'red' }, action: 'cancel' },
      { filter: { status: ['asleep'] }, action: 'cancel' },
      { filter: { status: [] }, action: 'cancel' },
      { filter: { createdAfter: 'yesterday' }, action: 'cancel' },
      { filter: { workflow: { $gt: '' } }, action: 'cancel' },
      { filter: {}, action: 'cancel', pageSize: 0 },
      { filter: {}, action: 'cancel', pageSize: 1001 },
      { filter: {}, action: 'cancel', dryRun: 'yes' },
      { filter: {}, action: 'cancel', onProgress: 'print' },
      { filter: {}, action: 'cancel', reason: 'nul\u0000inside' },
      { filter: { tags: {} }, action: 'cancel' },
      { filter: { runIds: [] }, action: 'cancel' },
      { filter: { runIds: 'abc' }, action: 'cancel' },
      { filter: { tags: { customer: 42 } }, action: 'cancel' },
    ];
    await w.settle();
    w.store.reset();
    for (const options of bad) {
      await rejectsWithCode(w.engine.bulk(options as never), 'INVALID_INPUT', JSON.stringify(options) ?? 'undefined');
    }
    await rejectsWithCode(w.engine.resumeBulk(42 as never), 'INVALID_INPUT', 'resumeBulk(42)');
    assert.deepEqual(w.store.calls, [], 'nothing was read or written');
    if (w.raw.bulk) {
      const missing = await w.engine.resumeBulk('00000000-0000-7000-8000-000000000000').catch((error: unknown) => error);
      assert.ok(CairnError.is(missing, 'BULK_NOT_FOUND'));
    }
  }),
]);
