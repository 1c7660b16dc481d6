import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import type { FaultPoint } from '@cairn/core/testing';
import { caseGroup, conformanceCase, type CaseEnv } from '../case.js';
import { CrashAt } from '../fixtures/crash-at.js';
import { engineWorld, type EngineWorld } from './engine-world.js';

const child = defineWorkflow('select-child', async (ctx, input: { ms: number }) => {
  await ctx.sleep('work', input.ms);
  return 'child done';
});

/**
 * Waits for approval, a 1 h timer or a child (whose length is the input), records the winner, then
 * waits for the next 'approval' message with a plain wait (a losing event's message stays for it).
 */
const approval = defineWorkflow('select-approval', async (ctx, input: { childMs: number }) => {
  const first = await ctx.select('first', {
    approved: { event: 'approval' },
    timeout: { timer: '1h' },
    done: { child, input: { ms: input.childMs } },
  });
  await ctx.sleep('after', '1m'); // the rest is a replay
  const next = await ctx.waitForEvent('approval');
  return { first, next };
});

const waiting = (w: EngineWorld, id: string) => w.runUntil('the run waits', async () => (await w.raw.runs.get(id))?.status === 'waiting');

async function childrenOf(env: CaseEnv, parent: string) {
  const page = await env.store.runs.list({ workflow: 'select-child', limit: 50 });
  return page.runs.filter((r) => r.parent?.runId === parent);
}

/** Engine scenarios: first of N. */
export const selectGroup = caseGroup('engine.select', 'engine: first of N (ctx.select)', [
  conformanceCase('an event wins: recorded with its value, the child is cancelled, the next wait gets the next message', async (env) => {
    const w = await engineWorld(env, [approval, child]);
    const handle = await w.engine.startRun(approval, { childMs: 7_200_000 });
    await waiting(w, handle.id);
    await w.engine.sendEvent(handle.id, 'approval', { by: 'ann' });
    await w.runUntil('the select is decided', async () => (await w.raw.steps.load(handle.id)).some((s) => s.key === 'first' && s.status === 'succeeded'));
    await w.engine.sendEvent(handle.id, 'approval', { by: 'bob' });
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed', JSON.stringify(run.error));
    assert.deepEqual(run.output, { first: { winner: 'approved', kind: 'event', value: { by: 'ann' } }, next: { by: 'bob' } });
    const [kid] = await childrenOf(env, handle.id);
    assert.equal(kid?.status, 'cancelled', 'the losing child is cancelled');
  }),

  conformanceCase('a timer wins: a message sent later is not taken by the select; the next wait receives it', async (env) => {
    const w = await engineWorld(env, [approval, child]);
    const handle = await w.engine.startRun(approval, { childMs: 7_200_000 });
    await w.runUntil('the select is decided', async () => (await w.raw.steps.load(handle.id)).some((s) => s.key === 'first' && s.status === 'succeeded'));
    await w.engine.sendEvent(handle.id, 'approval', { by: 'late' });
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed', JSON.stringify(run.error));
    assert.deepEqual(run.output, { first: { winner: 'timeout', kind: 'timer', value: null }, next: { by: 'late' } });
  }),

  conformanceCase('a child wins: its outcome is the value; the timer is dropped', async (env) => {
    const w = await engineWorld(env, [approval, child]);
    const handle = await w.engine.startRun(approval, { childMs: 60_000 });
    await w.runUntil('the select is decided', async () => (await w.raw.steps.load(handle.id)).some((s) => s.key === 'first' && s.status === 'succeeded'));
    await w.engine.sendEvent(handle.id, 'approval', { by: 'later' });
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed', JSON.stringify(run.error));
    assert.deepEqual(run.output, { first: { winner: 'done', kind: 'child', value: { ok: true, output: 'child done' } }, next: { by: 'later' } });
    assert.equal(w.clock.now() - env.t0 < 3_600_000, true, 'the 1 h timer did not hold the run');
  }),

  conformanceCase('each kind of winner is returned again after a crash at every checkpoint, and decided once', async (env) => {
    for (const point of ['before-checkpoint', 'after-checkpoint', 'after-claim', 'before-ack'] as FaultPoint[]) {
      for (const kind of ['event', 'timer', 'child'] as const) {
        const faults = new CrashAt(point);
        const w = await engineWorld(env, [approval, child], { faults });
        const handle = await w.engine.startRun(approval, { childMs: kind === 'child' ? 60_000 : 7_200_000 });
        if (kind === 'event') {
          await waiting(w, handle.id).catch(() => undefined);
          await w.engine.sendEvent(handle.id, 'approval', { by: 'ann' });
        }
        await w.runUntil(
          `a crash at ${point} or the decision`,
          async () => faults.crashed || (await w.raw.steps.load(handle.id)).some((s) => s.key === 'first' && s.status === 'succeeded'),
        );
        await w.engine.stop();
        const survivor = await w.startEngine([approval, child]);
        await w.runUntil('the select is decided', async () => (await w.raw.steps.load(handle.id)).some((s) => s.key === 'first' && s.status === 'succeeded'));
        await survivor.sendEvent(handle.id, 'approval', { by: 'next' });
        const run = await w.runToEnd(handle.id);
        const where = `${kind} winner, crash at ${point}`;
        assert.equal(run.status, 'completed', `${where}: ${JSON.stringify(run.error)}`);
        const winner = { event: 'approved', timer: 'timeout', child: 'done' }[kind];
        assert.equal((run.output as { first: { winner: string } }).first.winner, winner, where);
        assert.deepEqual((run.output as { next: unknown }).next, { by: 'next' }, where);
        assert.equal((await childrenOf(env, handle.id)).length, 1, `${where}: one child`);
        await survivor.stop();
      }
    }
  }),

  conformanceCase('bad alternatives are refused with INVALID_INPUT before anything is recorded', async (env) => {
    const bad = defineWorkflow('select-bad', async (ctx, input: { alternatives: unknown }) => {
      try {
        await ctx.select('pick', input.alternatives as never);
        return 'accepted';
      } catch (error) {
        return (error as { code?: string }).code ?? 'other';
      }
    });
    const w = await engineWorld(env, [bad]);
    for (const alternatives of [
      {},
      [],
      { a: { timer: '10 minutes' } },
      { a: { event: 'x#2' } },
      { a: { frob: 1 } },
      { a: { timer: '1s', event: 'x' } },
      { a: null },
    ]) {
      const handle = await w.engine.startRun(bad, { alternatives } as never);
      const run = await w.runToEnd(handle.id);
      assert.equal(run.output, 'INVALID_INPUT', JSON.stringify(alternatives));
      assert.deepEqual(await w.raw.steps.load(handle.id), []);
    }
  }),
]);
