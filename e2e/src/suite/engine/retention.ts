import assert from 'node:assert/strict';
import { createEngine, defineWorkflow, NonRetryableError } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

const HOUR = 3_600_000;

const quick = defineWorkflow('retention-quick', async (ctx) => ctx.step('s', () => 'done'));
const failing = defineWorkflow('retention-failing', async (ctx) =>
  ctx.step('s', () => {
    throw new NonRetryableError('no');
  }),
);
const waits = defineWorkflow('retention-waits', async (ctx) => ctx.waitForEvent('go'));

/** Retention (`createEngine({ retention })`) and `engine.prune` on every backend. */
export const retentionGroup: CaseGroup = caseGroup('engine.retention', 'engine: retention and prune', [
  conformanceCase(
    'prune deletes the ended runs older than `before` with everything they recorded, never an active run, and frees their idempotency keys',
    async (env) => {
      const w = await engineWorld(env, [quick, failing, waits]);
      const done = await w.engine.startRun(quick, null, { idempotencyKey: 'order-1' });
      const failed = await w.engine.startRun(failing, null);
      const waiting = await w.engine.startRun(waits, null);
      await w.runToEnd(done.id);
      await w.runToEnd(failed.id);
      await w.runUntil('the run waits', async () => (await w.engine.getRun(waiting.id))?.status === 'waiting');
      await w.clock.advance(HOUR);
      const late = await w.engine.startRun(quick, null);
      await w.runToEnd(late.id);
      const cutoff = w.clock.now() - HOUR / 2;
      assert.deepEqual(await w.engine.prune({ before: cutoff }), { deleted: 2 });
      assert.equal(await w.engine.getRun(done.id), undefined);
      assert.equal(await w.engine.getRun(failed.id), undefined);
      assert.deepEqual(await w.raw.steps.load(done.id), [], 'its steps went with it');
      assert.deepEqual(await w.raw.history.list(done.id), [], 'and its attempts');
      assert.equal((await w.engine.getRun(waiting.id))?.status, 'waiting', 'an active run is never pruned');
      assert.equal((await w.engine.getRun(late.id))?.status, 'completed', 'a run ended after the cutoff is kept');
      assert.equal(await w.engine.findRun('retention-quick', 'order-1'), undefined);
      const again = await w.engine.startRun(quick, null, { idempotencyKey: 'order-1' });
      assert.equal(again.created, true, 'the key of a pruned run starts a new run');
      assert.notEqual(again.id, done.id);
      assert.deepEqual(await w.engine.prune({ before: cutoff }), { deleted: 0 });
    },
  ),

  conformanceCase('prune takes statuses and a limit', async (env) => {
    const w = await engineWorld(env, [quick, failing]);
    const ids = [];
    for (let i = 0; i < 3; i += 1) ids.push((await w.engine.startRun(quick, null)).id);
    const failed = await w.engine.startRun(failing, null);
    for (const id of [...ids, failed.id]) await w.runToEnd(id);
    await w.clock.advance(1000);
    assert.deepEqual(await w.engine.prune({ before: w.clock.now(), statuses: ['completed'], limit: 2 }), { deleted: 2 });
    assert.equal((await w.engine.listRuns({ status: 'completed' })).runs.length, 1);
    assert.equal((await w.engine.getRun(failed.id))?.status, 'failed');
    assert.deepEqual(await w.engine.prune({ before: w.clock.now(), statuses: ['failed'] }), { deleted: 1 });
  }),

  conformanceCase(
    'retention: the recovery loop deletes runs that ended longer ago than their status keeps them; statuses without a retention are kept',
    async (env) => {
      const w = await engineWorld(env, [quick, failing], { retention: { completed: '1h' } });
      const done = await w.engine.startRun(quick, null);
      const failed = await w.engine.startRun(failing, null);
      await w.runToEnd(done.id);
      await w.runToEnd(failed.id);
      await w.runUntil('the completed run is pruned', async () => (await w.engine.getRun(done.id)) === undefined, { maxTimers: 1_000 });
      assert.ok(w.clock.now() - (await w.raw.runs.get(failed.id))!.updatedAt >= HOUR, 'pruned only once its retention passed');
      assert.equal((await w.engine.getRun(failed.id))?.status, 'failed', 'failed runs have no retention here');
    },
  ),

  conformanceCase('a child that ended is kept while its parent is active, and pruned once the parent ended too', async (env) => {
    const kid = defineWorkflow('retention-kid', async (ctx) => ctx.step('k', () => 'kid'));
    const parent = defineWorkflow('retention-parent', async (ctx) => {
      const out = await ctx.child(kid, null);
      await ctx.waitForEvent('go');
      return out;
    });
    const w = await engineWorld(env, [parent, kid]);
    const handle = await w.engine.startRun(parent, null);
    await w.runUntil('the child ended and the parent waits', async () => {
      const [child] = (await w.engine.listRuns({ parentRunId: handle.id })).runs;
      return child?.status === 'completed' && (await w.engine.getRun(handle.id))?.status === 'waiting';
    });
    const [child] = (await w.engine.listRuns({ parentRunId: handle.id })).runs;
    await w.clock.advance(1000);
    assert.deepEqual(await w.engine.prune({ before: w.clock.now() }), { deleted: 0 }, 'the child of an active parent is kept');
    assert.ok(await w.engine.getRun(child!.id));
    await w.engine.sendEvent(handle.id, 'go', null);
    await w.runToEnd(handle.id);
    await w.clock.advance(1000);
    assert.deepEqual(await w.engine.prune({ before: w.clock.now() }), { deleted: 2 });
  }),

  conformanceCase("prune racing a retry: a run reopened between the pruner's read and its delete is kept", async (env) => {
    let broken = true;
    const flaky = defineWorkflow('retention-flaky', async (ctx) =>
      ctx.step('s', () => {
        if (broken) throw new NonRetryableError('no');
        return 'ok';
      }),
    );
    const w = await engineWorld(env, [flaky]);
    const handle = await w.engine.startRun(flaky, null);
    await w.runToEnd(handle.id);
    broken = false;
    // A pruner whose batch read is followed, before its deletes, by an operator's retry.
    const racing: WorkflowStore = {
      ...env.store,
      runs: {
        ...env.store.runs,
        listEnded: async (query) => {
          const page = await env.store.runs.listEnded(query);
          if (page.runs.some((r) => r.id === handle.id)) await w.engine.retryRun(handle.id);
          return page;
        },
      },
    };
    const pruner = createEngine({ store: racing, workflows: [], clock: w.clock });
    await w.clock.advance(1000);
    assert.deepEqual(await pruner.prune({ before: w.clock.now(), statuses: ['failed'] }), { deleted: 0 });
    assert.equal((await w.runToEnd(handle.id)).output, 'ok', 'the retried run went on');
  }),

  conformanceCase('bad input is refused with INVALID_INPUT: active statuses, no cutoff and no retention, a bad retention', async (env) => {
    const w = await engineWorld(env, [quick]);
    await rejectsWithCode(w.engine.prune({ before: w.clock.now(), statuses: ['running'] }), 'INVALID_INPUT', 'pruning running runs');
    await rejectsWithCode(w.engine.prune(), 'INVALID_INPUT', 'prune without before or retention');
    await rejectsWithCode(w.engine.prune({ before: 'yesterday' } as never), 'INVALID_INPUT', 'a before that is not a time');
    await rejectsWithCode(w.engine.prune({ before: 1, limit: 0 }), 'INVALID_INPUT', 'a limit of 0');
    assert.throws(
      () => createEngine({ store: env.store, workflows: [], retention: { completed: 'forever' } as never }),
      (e: unknown) => (e as { code?: string }).code === 'INVALID_INPUT',
    );
    assert.throws(
      () => createEngine({ store: env.store, workflows: [], retention: { running: '1h' } as never }),
      (e: unknown) => (e as { code?: string }).code === 'INVALID_INPUT',
    );
  }),
]);
