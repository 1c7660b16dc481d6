import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

const HOUR = 3_600_000;

/** Engine scenarios: replay serves what was recorded, and refuses what no longer matches. */
export const replayGroup: CaseGroup = caseGroup('engine.replay', 'engine: replay', [
  conformanceCase('inline steps complete; each is recorded once, succeeded, on attempt 1', async (env) => {
    const ran = { a: 0, b: 0, c: 0 };
    const wf = defineWorkflow('replay-basic', async (ctx, input: { n: number }) => {
      const a = await ctx.step('a', () => (ran.a++, input.n + 1));
      const b = await ctx.step('b', () => (ran.b++, a * 2));
      const c = await ctx.step('c', () => (ran.c++, `${b}`));
      return { a, b, c };
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, { n: 1 });
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed');
    assert.deepEqual(run.output, { a: 2, b: 4, c: '4' });
    assert.deepEqual(await handle.result(), { a: 2, b: 4, c: '4' });
    assert.deepEqual(ran, { a: 1, b: 1, c: 1 });
    const steps = await w.raw.steps.load(handle.id);
    assert.deepEqual(
      steps.map((s) => [s.key, s.seq, s.kind, s.status, s.attempt, s.output]),
      [
        ['a', 0, 'task', 'succeeded', 1, 2],
        ['b', 1, 'task', 'succeeded', 1, 4],
        ['c', 2, 'task', 'succeeded', 1, '4'],
      ],
    );
    assert.deepEqual(
      (await w.raw.history.list(handle.id)).map((a) => [a.stepKey, a.attempt, a.status]),
      [
        ['a', 1, 'succeeded'],
        ['b', 1, 'succeeded'],
        ['c', 1, 'succeeded'],
      ],
    );
  }),

  conformanceCase('recorded steps are served on replay: bodies before a sleep run once over two executions', async (env) => {
    const ran = { before: 0, after: 0 };
    const wf = defineWorkflow('replay-sleep', async (ctx) => {
      const first = await ctx.step('before', () => (ran.before++, { v: 'first' }));
      await ctx.sleep('nap', '1h');
      const second = await ctx.step('after', () => (ran.after++, 'second'));
      return [first, second];
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    const sleeping = await w.raw.runs.get(handle.id);
    assert.equal(sleeping?.wakeAt, env.t0 + HOUR, 'the run wakes when the sleep ends');
    assert.equal(sleeping?.lease, undefined, 'a sleeping run holds no lease');
    const run = await w.runToEnd(handle.id);
    assert.deepEqual(run.output, [{ v: 'first' }, 'second']);
    assert.deepEqual(ran, { before: 1, after: 1 });
    assert.ok(run.fence >= 2, 'the run was executed (claimed) at least twice');
  }),

  conformanceCase('now(), random() and uuid() return their recorded values on replay', async (env) => {
    const seen: unknown[] = [];
    const wf = defineWorkflow('replay-recorded', async (ctx) => {
      const values = { now: await ctx.now(), random: await ctx.random(), uuid: await ctx.uuid() };
      seen.push(values);
      await ctx.sleep('nap', 60_000);
      return values;
    });
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const w = await engineWorld(env, [wf], { stickyExecutions: false });
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(seen.length, 2, 'the handler ran twice (before and after the sleep)');
    assert.deepEqual(seen[1], seen[0], 'the replay saw the recorded values');
    assert.deepEqual(run.output, seen[0]);
    const first = seen[0] as { now: number; random: number; uuid: string };
    assert.equal(first.now, env.t0);
    assert.ok(first.random >= 0 && first.random < 1);
    assert.match(first.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  }),

  conformanceCase('Promise.all over steps: keys follow call order, repeated names get #2, #3', async (env) => {
    const wf = defineWorkflow('replay-parallel', async (ctx) => {
      const [x, y, z] = await Promise.all([ctx.step('p', () => 1), ctx.step('p', () => 2), ctx.step('q', () => 3)]);
      await ctx.sleep('nap', 1_000);
      const again = await ctx.step('p', () => 4);
      return [x, y, z, again];
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.deepEqual(run.output, [1, 2, 3, 4]);
    assert.deepEqual(
      (await w.raw.steps.load(handle.id)).map((s) => [s.seq, s.key, s.output ?? null]),
      [
        [0, 'p', 1],
        [1, 'p#2', 2],
        [2, 'q', 3],
        [3, 'nap', null],
        [4, 'p#3', 4],
      ],
    );
  }),

  conformanceCase(
    'a fan-out of two-step branches whose first steps finish in reverse order: after a replay each branch gets its own results, each body ran once',
    async (env) => {
      const ids = ['a', 'b', 'c'];
      const ran: string[] = [];
      // Real macrotask turns inside the bodies: c's fetch finishes first and a's last.
      const turns = async (n: number) => {
        for (let i = 0; i < n; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
      };
      const wf = defineWorkflow('replay-fan-out', async (ctx) => {
        const saved = await Promise.all(
          ids.map(async (id, i) => {
            const fetched = await ctx.step('fetch', async () => {
              await turns(4 * (ids.length - i));
              ran.push(`fetch-${id}`);
              return `fetched-${id}`;
            });
            const at = await ctx.now();
            return [await ctx.step('save', () => (ran.push(`save-${id}`), `saved-${fetched}`)), typeof at] as const;
          }),
        );
        await ctx.sleep('then', '1m'); // the rest is a replay
        const tagged = await Promise.all(
          ids.map(async (id, i) => `${await ctx.step('tag', async () => (await turns(i === 0 ? 8 : 1), id))}/${await ctx.step('tag-again', () => id)}`),
        );
        return { saved: saved.map(([value]) => value), tagged };
      });
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, null);
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.deepEqual(run.output, { saved: ['saved-fetched-a', 'saved-fetched-b', 'saved-fetched-c'], tagged: ['a/a', 'b/b', 'c/c'] });
      assert.deepEqual([...ran].sort(), ['fetch-a', 'fetch-b', 'fetch-c', 'save-a', 'save-b', 'save-c']);
      const steps = await w.raw.steps.load(handle.id);
      // Every outcome was handed over in a recorded turn.
      assert.deepEqual(
        steps.filter((s) => s.turn === undefined).map((s) => s.key),
        [],
      );
    },
  ),

  conformanceCase('changed code under the same version fails with NON_DETERMINISM, not a wrong value', async (env) => {
    const original = defineWorkflow('replay-changed', async (ctx) => {
      const a = await ctx.step('a', () => 'recorded');
      await ctx.sleep('nap', '1h');
      return a;
    });
    const w = await engineWorld(env, [original]);
    const handle = await w.engine.startRun(original, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    await w.engine.stop();
    let renamedRan = 0;
    const changed = defineWorkflow('replay-changed', async (ctx) => {
      const a = await ctx.step('renamed', () => (renamedRan++, 'fresh'));
      await ctx.sleep('nap', '1h');
      return a;
    });
    const next = await w.startEngine([changed]);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'NON_DETERMINISM');
    assert.equal(renamedRan, 0, 'the renamed step must not run in place of the recorded one');
    await rejectsWithCode(next.result(handle.id), 'RUN_FAILED');
  }),
]);
