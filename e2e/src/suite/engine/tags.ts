import assert from 'node:assert/strict';
import { defineWorkflow, type WorkflowDefinition } from '@cairn/core';
import { TAG_LIMITS } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { CrashOnceAtSite } from '../fixtures/crash-at.js';
import { engineWorld } from './engine-world.js';

/** Tags at the start, a write before a step, two at once after a sleep, and a last one that changes a value. */
function taggedWorkflow(): WorkflowDefinition<null, unknown> {
  return defineWorkflow('tagged', async (ctx) => {
    await ctx.setTags({ stage: 'paid' });
    const a = await ctx.step('a', () => 1);
    await ctx.sleep('nap', '1m');
    await Promise.all([ctx.setTags({ carrier: 'ups' }), ctx.setTags({ carrier: 'dhl', box: 'S' })]);
    await ctx.setTags({ stage: 'shipped' });
    return a;
  });
}

const FINAL_TAGS = { customer: 'c-42', stage: 'shipped', carrier: 'dhl', box: 'S' };

/** `startRun` tags, `ctx.setTags`, and `listRuns({ tags })` through the engine. */
export const tagsEngineGroup: CaseGroup = caseGroup('engine.tags', 'engine: run tags', [
  conformanceCase(
    'startRun tags and ctx.setTags are found by listRuns; every replay leaves them written once, in call order',
    async (env) => {
      const wf = taggedWorkflow();
      // Every wake replays, so each setTags call is made again by later executions.
      const w = await engineWorld(env, [wf], { stickyExecutions: false });
      const run = await w.engine.startRun(wf, null, { tags: { customer: 'c-42' } });
      const other = await w.engine.startRun(wf, null, { tags: { customer: 'c-43' } });
      assert.deepEqual(
        (await w.engine.listRuns({ tags: { customer: 'c-42' } })).runs.map((r) => r.id),
        [run.id],
      );
      await w.runUntil('the first write', async () => (await w.raw.runs.get(run.id))?.tags?.['stage'] === 'paid');
      await w.runToEnd(run.id);
      await w.runToEnd(other.id);
      const ended = await w.engine.getRun(run.id);
      assert.deepEqual(ended?.tags, FINAL_TAGS, 'the later write of two made at once wins: they are applied in call order');
      assert.equal(ended?.tagWrites, 4, 'four calls, four writes');
      const applied = w.store.calls.filter((c) => c.method === 'runs.setTags' && c.runId === run.id);
      assert.equal(applied.length, 4, 'a replay makes no tag write again (its places are taken)');
      assert.deepEqual(
        (await w.engine.listRuns({ tags: { stage: 'shipped', customer: 'c-42' }, status: 'completed', workflow: 'tagged' })).runs.map((r) => r.id),
        [run.id],
      );
      assert.deepEqual((await w.engine.listRuns({ tags: { stage: 'paid' } })).runs, [], 'the value it replaced finds nothing');
      assert.equal((await w.engine.listRuns({ tags: { stage: 'shipped' } })).runs.length, 2);
    },
    { requires: ['tags'] },
  ),

  conformanceCase(
    'a crash before or after each tag write, then recovery: the run ends with its tags written once each, in order',
    async (env) => {
      const probe = new CrashOnceAtSite();
      const dry = await engineWorld(env, [taggedWorkflow()], { faults: probe });
      await dry.runToEnd((await dry.engine.startRun('tagged', null, { tags: { customer: 'c-42' } })).id);
      await dry.engine.stop();
      const sites = [...new Map(probe.hits.filter((h) => h.stepKey?.startsWith('tags#')).map((h) => [`${h.point} ${h.stepKey}`, h])).values()];
      assert.equal(sites.length, 8, `before and after each of the four writes, got ${sites.map((s) => `${s.point} ${s.stepKey}`).join(', ')}`);
      for (const target of sites) {
        const faults = new CrashOnceAtSite({ point: target.point, stepKey: target.stepKey });
        const w = await engineWorld(env, [taggedWorkflow()], { faults });
        const handle = await w.engine.startRun('tagged', null, { tags: { customer: 'c-42' } });
        const where = `a crash at ${target.point} ${target.stepKey}`;
        await w.runUntil(where, async () => faults.crashed !== undefined);
        await w.engine.stop();
        const survivor = await w.startEngine([taggedWorkflow()]);
        const run = await w.runToEnd(handle.id);
        assert.equal(run.status, 'completed', where);
        assert.deepEqual(run.tags, FINAL_TAGS, where);
        assert.equal(run.tagWrites, 4, where);
        await survivor.stop();
      }
    },
    { requires: ['tags'] },
  ),

  conformanceCase(
    'tags past TAG_LIMITS or of the wrong shape are refused with a typed error and nothing written; a workflow can catch its refusal',
    async (env) => {
      let caught: unknown;
      const wf = defineWorkflow('tag-limits', async (ctx) => {
        await ctx.setTags({ a: '1' });
        try {
          await ctx.setTags(Object.fromEntries(Array.from({ length: TAG_LIMITS.maxTags }, (_, i) => [`k${i}`, 'v'])));
        } catch (error) {
          caught = (error as { code?: string }).code;
        }
        await ctx.setTags({ b: '2' });
        return 'ok';
      });
      const w = await engineWorld(env, [wf]);
      const refuse = async (tags: unknown, code: 'INVALID_INPUT' | 'TAG_LIMIT', what: string) => {
        await rejectsWithCode(w.engine.startRun(wf, null, { tags } as never), code, what);
      };
      await refuse({ a: 'x\u0000y' }, 'INVALID_INPUT', 'a NUL in a value');
      await refuse({ 'a\u0000': 'x' }, 'INVALID_INPUT', 'a NUL in a key');
      await refuse({ a: '\ud800' }, 'INVALID_INPUT', 'a lone surrogate');
      await refuse({ '': 'x' }, 'INVALID_INPUT', 'an empty key');
      await refuse({ a: 1 }, 'INVALID_INPUT', 'a number value');
      await refuse({ a: null }, 'INVALID_INPUT', 'a null value');
      await refuse(['a'], 'INVALID_INPUT', 'an array');
      await refuse('a=b', 'INVALID_INPUT', 'a string');
      await refuse({ ['k'.repeat(TAG_LIMITS.maxKeyLength + 1)]: 'v' }, 'TAG_LIMIT', 'a key one too long');
      await refuse({ k: 'v'.repeat(TAG_LIMITS.maxValueLength + 1) }, 'TAG_LIMIT', 'a value one too long');
      await refuse(Object.fromEntries(Array.from({ length: TAG_LIMITS.maxTags + 1 }, (_, i) => [`k${i}`, 'v'])), 'TAG_LIMIT', 'one tag too many');
      assert.deepEqual((await w.raw.runs.list({})).runs, [], 'no refused start wrote a run');
      await rejectsWithCode(w.engine.listRuns({ tags: {} }), 'INVALID_INPUT', 'an empty tag filter');
      await rejectsWithCode(w.engine.listRuns({ tags: { a: 1 } } as never), 'INVALID_INPUT', 'a filter value that is no string');
      await rejectsWithCode(w.engine.listRuns({ tags: { $ne: 'x' } as never, status: { $gt: '' } } as never), 'INVALID_INPUT', 'an operator object');

      const run = await w.runToEnd((await w.engine.startRun(wf, null)).id);
      assert.equal(caught, 'TAG_LIMIT', 'the write that would pass the count is refused inside the workflow');
      assert.deepEqual(run.tags, { a: '1', b: '2' }, 'the refused write wrote nothing');
      assert.equal(run.tagWrites, 2);
    },
    { requires: ['tags'] },
  ),

  conformanceCase(
    'a continueAsNew successor carries the run’s tags as they stand; a child run has its own',
    async (env) => {
      const kid = defineWorkflow('tag-kid', async (ctx) => {
        await ctx.setTags({ role: 'kid' });
        return 1;
      });
      const loop = defineWorkflow('tag-loop', async (ctx, n: number) => {
        await ctx.setTags({ round: String(n) });
        if (n === 0) await ctx.child(kid, null);
        if (n < 2) return ctx.continueAsNew(n + 1);
        return n;
      });
      const w = await engineWorld(env, [loop, kid]);
      const first = await w.engine.startRun(loop, 0, { tags: { customer: 'c-9' } });
      await w.runToEnd(first.id);
      const chain = (await w.engine.listRuns({ tags: { customer: 'c-9' } })).runs;
      assert.equal(chain.length, 3, 'the run and its two successors');
      // Made in one millisecond of the world's clock: their order is their ids', so compare as sets.
      assert.deepEqual(chain.map((r) => r.tags?.['round']).sort(), ['0', '1', '2']);
      assert.deepEqual(chain.find((r) => r.status === 'completed' && r.tags?.['round'] === '2')?.tags, { customer: 'c-9', round: '2' });
      const kids = (await w.engine.listRuns({ tags: { role: 'kid' } })).runs;
      assert.equal(kids.length, 1);
      assert.deepEqual(kids[0]?.tags, { role: 'kid' });
    },
    { requires: ['tags'] },
  ),
]);
