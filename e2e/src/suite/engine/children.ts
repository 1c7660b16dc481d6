import assert from 'node:assert/strict';
import { CairnError, defineWorkflow, isTerminalRunStatus, type Json } from '@cairn/core';
import { FAULT_POINTS } from '@cairn/core/testing';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { CrashAt } from '../fixtures/crash-at.js';
import { engineWorld, type EngineWorld } from './engine-world.js';

/** The child run a parent's step `key` started, once it is recorded. */
async function childOf(env: CaseEnv, parentId: string, key: string): Promise<string | undefined> {
  return (await env.store.steps.load(parentId)).find((s) => s.key === key)?.childRunId;
}

/** Runs until the parent's child (step `key`) is waiting in its sleep; returns the child's id. */
async function untilChildWaits(env: CaseEnv, w: EngineWorld, parentId: string, key: string): Promise<string> {
  let id: string | undefined;
  await w.runUntil(`the child of step ${key} waits`, async () => {
    id = await childOf(env, parentId, key);
    return id !== undefined && (await env.store.runs.get(id))?.status === 'waiting';
  });
  return id as string;
}

/** Engine scenarios: child runs. */
export const childrenGroup: CaseGroup = caseGroup('engine.children', 'engine: children', [
  conformanceCase("a child's output is returned to its parent; the child knows its parent", async (env) => {
    let childRuns = 0;
    const child = defineWorkflow('child-double', async (ctx, input: { n: number }) => {
      childRuns += 1;
      return ctx.step('double', () => input.n * 2);
    });
    const parent = defineWorkflow('child-parent', async (ctx, input: { n: number }) => {
      const doubled = await ctx.child(child, { n: input.n });
      return ctx.step('after', () => doubled + 1);
    });
    const w = await engineWorld(env, [parent, child]);
    const handle = await w.engine.startRun(parent, { n: 20 });
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 41);
    const [spawn] = await w.raw.steps.load(handle.id);
    assert.equal(spawn?.kind, 'child');
    assert.equal(spawn?.status, 'succeeded');
    assert.ok(spawn?.childRunId);
    const childRun = await w.raw.runs.get(spawn.childRunId);
    assert.equal(childRun?.status, 'completed');
    assert.deepEqual(childRun?.parent, { runId: handle.id, stepKey: spawn.key });
    assert.equal((await w.raw.runs.list({ workflow: 'child-double' })).runs.length, 1, 'the child is created once');
    assert.ok(childRuns >= 1);
  }),

  conformanceCase('a failed child throws CHILD_FAILED into its parent', async (env) => {
    const child = defineWorkflow('child-fails', async () => {
      throw new RangeError('child broke');
    });
    const parent = defineWorkflow('child-failing-parent', async (ctx) => {
      try {
        await ctx.child(child, null);
        return 'unexpected';
      } catch (error) {
        return CairnError.is(error, 'CHILD_FAILED') ? 'child failed' : `other: ${String(error)}`;
      }
    });
    const w = await engineWorld(env, [parent, child]);
    const handle = await w.engine.startRun(parent, null);
    assert.equal((await w.runToEnd(handle.id)).output, 'child failed');
    const [spawn] = await w.raw.steps.load(handle.id);
    assert.equal(spawn?.status, 'failed');
    assert.equal((await w.raw.runs.get(spawn?.childRunId ?? ''))?.status, 'failed');
  }),

  conformanceCase('cancelling a parent cancels its running child', async (env) => {
    const child = defineWorkflow('child-sleeper', async (ctx) => {
      await ctx.sleep('long', '1d');
      return 'woke';
    });
    const parent = defineWorkflow('child-cancelled-parent', async (ctx) => ctx.child(child, null));
    const w = await engineWorld(env, [parent, child]);
    const handle = await w.engine.startRun(parent, null);
    await w.runUntil('the child sleeps', async () => {
      const [spawn] = await w.raw.steps.load(handle.id);
      return spawn?.childRunId !== undefined && (await w.raw.runs.get(spawn.childRunId))?.status === 'waiting';
    });
    await w.engine.cancel(handle.id);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'cancelled');
    const [spawn] = await w.raw.steps.load(handle.id);
    const childRun = await w.runToEnd(spawn?.childRunId ?? '');
    assert.equal(childRun.status, 'cancelled');
  }),

  conformanceCase('a waiting parent is woken when its child completes, with no replay while the child runs', async (env) => {
    // 50 minutes: far longer than any periodic re-check, shorter than the engine's backstop (1 h).
    const child = defineWorkflow('child-slow', async (ctx) => {
      await ctx.sleep('work', '50m');
      return 'slow done';
    });
    const parent = defineWorkflow('child-slow-parent', async (ctx) => ctx.child(child, null));
    const w = await engineWorld(env, [parent, child]);
    const handle = await w.engine.startRun(parent, null);
    const childId = await untilChildWaits(env, w, handle.id, 'child:child-slow');
    assert.equal(w.store.countReturned('runs.claim', handle.id), 1, 'the parent executed once to start its child');
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 'slow done');
    assert.equal((await env.store.runs.get(childId))?.status, 'completed');
    assert.equal(w.store.countReturned('runs.claim', handle.id), 2, 'the parent executed to start its child and once after the child ended, never in between');
  }),

  conformanceCase('a waiting parent is woken at once when its child is cancelled or deleted', async (env) => {
    const child = defineWorkflow('child-ended-early', async (ctx) => {
      await ctx.sleep('work', '1d');
      return 'never';
    });
    const parent = defineWorkflow('child-ended-early-parent', async (ctx) => {
      try {
        return await ctx.child(child, null);
      } catch (error) {
        return CairnError.is(error, 'CHILD_FAILED') ? (error.data as { status: string }).status : `other: ${String(error)}`;
      }
    });
    const w = await engineWorld(env, [parent, child]);
    for (const end of ['cancelled', 'deleted'] as const) {
      const handle = await w.engine.startRun(parent, null);
      const childId = await untilChildWaits(env, w, handle.id, 'child:child-ended-early');
      const before = w.clock.now();
      if (end === 'cancelled') {
        await w.engine.cancel(childId);
        // The child's own execution records its cancellation; no timer needs to fire for it.
        await w.runUntil('the child is cancelled', async () => (await env.store.runs.get(childId))?.status === 'cancelled');
      } else {
        assert.equal(await w.engine.deleteRun(childId, { force: true }), true);
      }
      await w.settle();
      const run = await env.store.runs.get(handle.id);
      assert.ok(run && isTerminalRunStatus(run.status), `${end}: the parent ended without waiting for a timer (status ${run?.status})`);
      assert.equal(run.output, end);
      assert.equal(w.clock.now(), before, `${end}: no clock time passed`);
      assert.equal(w.store.countReturned('runs.claim', handle.id), 2, `${end}: the parent executed twice`);
    }
  }),

  conformanceCase("ctx.childOutcome returns a child's end as a value, recorded and replayed exactly", async (env) => {
    const ok = defineWorkflow('outcome-ok', async (_ctx, n: number) => n * 2);
    const bad = defineWorkflow('outcome-bad', async (ctx) => {
      await ctx.sleep('first', '5m');
      throw new RangeError('no luck');
    });
    const seen: string[] = [];
    const parent = defineWorkflow('outcome-parent', async (ctx) => {
      const good = await ctx.childOutcome(ok, 21);
      const failed = await ctx.childOutcome(bad, null);
      const summary = {
        good,
        failed: failed.ok
          ? { ok: true, output: failed.output ?? null }
          : {
              ok: false,
              status: failed.status,
              code: failed.error.code,
              isCairnError: CairnError.is(failed.error, 'CHILD_FAILED'),
              cause: failed.error.cause instanceof Error ? `${failed.error.cause.name}: ${failed.error.cause.message}` : null,
            },
      };
      seen.push(JSON.stringify(summary));
      // Executed again after the sleep: both outcomes then come from the history.
      await ctx.sleep('then', '10m');
      return summary as unknown as Json;
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const w = await engineWorld(env, [parent, ok, bad], { stickyExecutions: false });
    const handle = await w.engine.startRun(parent, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed', `the parent completed although a child failed: ${JSON.stringify(run.error)}`);
    assert.deepEqual(run.output, {
      good: { ok: true, output: 42 },
      failed: { ok: false, status: 'failed', code: 'CHILD_FAILED', isCairnError: true, cause: 'RangeError: no luck' },
    });
    assert.ok(seen.length >= 2, `replayed after the sleep (${seen.length} passes)`);
    assert.deepEqual(new Set(seen).size, 1, `every pass saw the same outcomes: ${seen.join(' | ')}`);
    const steps = await env.store.steps.load(handle.id);
    assert.deepEqual(
      steps.map((s) => [s.key, s.kind, s.status, s.error?.code ?? null]),
      [
        ['child:outcome-ok', 'child', 'succeeded', null],
        ['child:outcome-bad', 'child', 'failed', 'CHILD_FAILED'],
        ['then', 'sleep', 'succeeded', null],
      ],
    );
  }),

  conformanceCase('a detached child (ctx.startChild) outlives its cancelled parent and never wakes it', async (env) => {
    const child = defineWorkflow('detached-child', async (ctx, input: { n: number }) => {
      await ctx.sleep('work', '2h');
      return input.n + 1;
    });
    const parent = defineWorkflow('detached-parent', async (ctx) => {
      const id = await ctx.startChild(child, { n: 1 });
      await ctx.sleep('long', '1d');
      return id;
    });
    const w = await engineWorld(env, [parent, child]);
    const handle = await w.engine.startRun(parent, null);
    await w.runUntil(
      'the parent sleeps',
      async () => (await env.store.runs.get(handle.id))?.status === 'waiting' && (await env.store.steps.load(handle.id)).some((s) => s.key === 'long'),
    );
    const [start] = await env.store.steps.load(handle.id);
    assert.equal(start?.key, 'startChild:detached-child');
    assert.equal(start?.kind, 'child');
    assert.equal(start?.status, 'succeeded');
    const childId = start?.childRunId as string;
    assert.equal(start?.output, childId, 'the recorded value is the child run id');
    const childRun = await env.store.runs.get(childId);
    assert.equal(childRun?.parent, undefined, 'a detached child has no parent to wake');
    assert.equal(childRun?.idempotencyKey, `$child:${handle.id}:startChild:detached-child`);
    await w.engine.cancel(handle.id);
    assert.equal((await w.runToEnd(handle.id)).status, 'cancelled');
    const claims = w.store.count('runs.claim', handle.id);
    const done = await w.runToEnd(childId);
    assert.equal(done.status, 'completed', 'the child was not cancelled with its parent');
    assert.equal(done.output, 2);
    assert.equal(w.store.count('runs.claim', handle.id), claims, 'the child ending did not wake its parent');
  }),

  conformanceCase('a detached child ending does not wake its parent; its id is replayed', async (env) => {
    const child = defineWorkflow('detached-quick', async (ctx) => {
      await ctx.sleep('work', '1m');
      return 'quick';
    });
    const ids: string[] = [];
    const parent = defineWorkflow('detached-quick-parent', async (ctx) => {
      const id = await ctx.startChild(child, null, { name: 'helper' });
      ids.push(id);
      await ctx.sleep('long', '3h');
      return id;
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const w = await engineWorld(env, [parent, child], { stickyExecutions: false });
    const handle = await w.engine.startRun(parent, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed');
    assert.equal(ids.length, 2, 'executed to start the child and after the sleep only');
    assert.equal(ids[0], ids[1]);
    assert.equal(run.output, ids[0]);
    assert.equal((await env.store.runs.get(ids[0] as string))?.status, 'completed');
    // Claims that took the lease: a redundant job for the same wake-up (the delayed job and the
    // recovery loop's) may also try, and find the run leased or ended.
    assert.equal(w.store.countReturned('runs.claim', handle.id), 2);
  }),

  conformanceCase('a crash at any fault point while starting children leaves exactly one child per call', async (env) => {
    let fired = 0;
    for (const point of FAULT_POINTS) {
      for (const k of [1, 2, 3]) {
        const kid = defineWorkflow('crash-kid', async (ctx, n: number) => ctx.step('double', () => n * 2));
        const parent = defineWorkflow('crash-parent', async (ctx) => {
          const detached = await ctx.startChild(kid, 1);
          const awaited = await ctx.child(kid, 2);
          const outcome = await ctx.childOutcome(kid, 3);
          return { detached, awaited, outcome: outcome.ok ? outcome.output : null } as unknown as Json;
        });
        const faults = new CrashAt(point, k);
        const w = await engineWorld(env, [parent, kid], { faults });
        const handle = await w.engine.startRun(parent, null);
        await w.runUntil(`${point} #${k} or the end`, async () => faults.crashed || (await env.store.runs.get(handle.id))?.status === 'completed');
        if (faults.crashed) fired += 1;
        await w.engine.stop();
        await w.startEngine([parent, kid]);
        const where = `crash at ${point} #${k}`;
        const run = await w.runToEnd(handle.id);
        assert.equal(run.status, 'completed', `${where}: ${JSON.stringify(run.error)}`);
        const output = run.output as { detached: string; awaited: number; outcome: number };
        assert.equal(output.awaited, 4, where);
        assert.equal(output.outcome, 6, where);
        const all = await env.store.runs.list({ workflow: 'crash-kid', limit: 100 });
        const mine = all.runs.filter((r) => r.idempotencyKey?.startsWith(`$child:${handle.id}:`));
        assert.deepEqual(
          mine.map((r) => r.idempotencyKey).sort(),
          [`$child:${handle.id}:child:crash-kid`, `$child:${handle.id}:child:crash-kid#2`, `$child:${handle.id}:startChild:crash-kid`],
          `${where}: one child per call`,
        );
        const steps = await env.store.steps.load(handle.id);
        assert.equal(steps.find((s) => s.key === 'startChild:crash-kid')?.childRunId, output.detached, `${where}: the detached child's id was recorded once`);
        assert.equal((await w.runToEnd(output.detached)).output, 2, where);
        for (const r of mine) await env.store.runs.delete(r.id);
        await env.store.runs.delete(handle.id);
      }
    }
    assert.ok(fired >= FAULT_POINTS.length * 2, `crashes fired: ${fired}`);
  }),
]);
