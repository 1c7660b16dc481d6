import assert from 'node:assert/strict';
import { defineWorkflow, NonRetryableError } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

/** `engine.forkRun` on every backend: reuse of the recorded prefix, exact replay, refusals. */
export const forkRunGroup: CaseGroup = caseGroup('engine.fork-run', 'engine: forkRun', [
  conformanceCase('a fork reuses the outcomes before fromStep and runs fromStep and what follows with the current code; both runs record it', async (env) => {
    const calls = { a: 0, b: 0, c: 0 };
    let version = 'old';
    const wf = defineWorkflow('fork-basic', async (ctx, input: { n: number }) => {
      const a = await ctx.step('a', () => ((calls.a += 1), input.n * 10));
      const b = await ctx.step('b', () => ((calls.b += 1), `${version} b`));
      const c = await ctx.step('c', () => ((calls.c += 1), `${version} c`));
      return { a, b, c };
    });
    const w = await engineWorld(env, [wf]);
    const source = await w.engine.startRun(wf, { n: 1 });
    const done = await w.runToEnd(source.id);
    assert.deepEqual(done.output, { a: 10, b: 'old b', c: 'old c' });
    version = 'new';
    const fork = await w.engine.forkRun(source.id, { fromStep: 'b' });
    assert.equal(fork.created, true);
    assert.notEqual(fork.id, source.id);
    const forked = await w.runToEnd(fork.id);
    assert.equal(forked.status, 'completed');
    assert.deepEqual(forked.output, { a: 10, b: 'new b', c: 'new c' }, 'a is the recorded output; b and c ran again');
    assert.deepEqual(calls, { a: 1, b: 2, c: 2 });
    assert.deepEqual(forked.forkedFrom, { runId: source.id, stepKey: 'b' });
    assert.deepEqual(forked.input, { n: 1 }, 'the source input by default');
    assert.deepEqual((await w.engine.getRun(source.id))?.output, done.output, 'the source is unchanged');
    assert.deepEqual(await fork.result(), forked.output, 'the handle waits for the fork');
  }),

  conformanceCase('a fork of a failed run from its failed step, with a new input, completes with the fixed code', async (env) => {
    let broken = true;
    const calls = { prepare: 0 };
    const wf = defineWorkflow('fork-failed', async (ctx, input: { to: string }) => {
      const prepared = await ctx.step('prepare', () => ((calls.prepare += 1), 'prepared'));
      return ctx.step('send', () => {
        if (broken) throw new NonRetryableError('broken');
        return `${prepared} for ${input.to}`;
      });
    });
    const w = await engineWorld(env, [wf]);
    const source = await w.engine.startRun(wf, { to: 'old' });
    assert.equal((await w.runToEnd(source.id)).status, 'failed');
    broken = false;
    const fork = await w.engine.forkRun(source.id, { fromStep: 'send', input: { to: 'new' } });
    const forked = await w.runToEnd(fork.id);
    assert.equal(forked.output, 'prepared for new');
    assert.equal(calls.prepare, 1);
    assert.equal((await w.engine.getRun(source.id))?.status, 'failed');
  }),

  conformanceCase('concurrent branches: the copied outcomes replay in their recorded turns, so the fork makes the same calls', async (env) => {
    const calls: string[] = [];
    const wf = defineWorkflow('fork-branches', async (ctx) => {
      const [x, y] = await Promise.all([ctx.step('x', () => (calls.push('x'), 'x')), ctx.step('y', () => (calls.push('y'), 'y'))]);
      const z = await ctx.step('z', () => (calls.push('z'), `${x}${y}`));
      return ctx.step('last', () => (calls.push('last'), `${z}!`));
    });
    const w = await engineWorld(env, [wf]);
    const source = await w.engine.startRun(wf, null);
    await w.runToEnd(source.id);
    calls.length = 0;
    const fork = await w.engine.forkRun(source.id, { fromStep: 'last' });
    const forked = await w.runToEnd(fork.id);
    assert.equal(forked.status, 'completed');
    assert.equal(forked.output, 'xy!');
    assert.deepEqual(calls, ['last']);
  }),

  conformanceCase('a fork after an event wait gets the messages the source was sent, so its waits line up', async (env) => {
    const wf = defineWorkflow('fork-events', async (ctx) => {
      const first = await ctx.waitForEvent('approve');
      const stamped = await ctx.step('stamp', () => `stamped ${JSON.stringify(first)}`);
      const second = await ctx.waitForEvent('approve');
      return { stamped, second };
    });
    const w = await engineWorld(env, [wf]);
    const source = await w.engine.startRun(wf, null);
    await w.runUntil('the source waits', async () => (await w.engine.getRun(source.id))?.status === 'waiting');
    await w.engine.sendEvent(source.id, 'approve', 'one');
    await w.engine.sendEvent(source.id, 'approve', 'two');
    assert.deepEqual((await w.runToEnd(source.id)).output, { stamped: 'stamped "one"', second: 'two' });
    const fork = await w.engine.forkRun(source.id, { fromStep: 'stamp' });
    const forked = await w.runToEnd(fork.id);
    assert.deepEqual(forked.output, { stamped: 'stamped "one"', second: 'two' });
  }),

  conformanceCase('refused with nothing written: an unknown step key (STEP_NOT_FOUND), a compensation key, a missing run, bad options', async (env) => {
    const wf = defineWorkflow('fork-refused', async (ctx) => {
      await ctx.step('a', () => 'a', { compensate: () => undefined });
      await ctx.step('b', () => {
        throw new NonRetryableError('no');
      });
    });
    const w = await engineWorld(env, [wf]);
    const source = await w.engine.startRun(wf, null);
    assert.equal((await w.runToEnd(source.id)).status, 'failed');
    const before = (await w.raw.runs.list({})).runs.length;
    const error = await rejectsWithCode(w.engine.forkRun(source.id, { fromStep: 'nope' }), 'STEP_NOT_FOUND', 'an unknown step key');
    assert.deepEqual((error.data as { keys?: string[] }).keys, ['a', 'b'], 'the error names the keys there are');
    await rejectsWithCode(w.engine.forkRun(source.id, { fromStep: 'a:compensate' }), 'STEP_NOT_FOUND', 'a compensation key');
    await rejectsWithCode(w.engine.forkRun('no-such-run', { fromStep: 'a' }), 'RUN_NOT_FOUND', 'a missing run');
    await rejectsWithCode(w.engine.forkRun(source.id, undefined as never), 'INVALID_INPUT', 'no options');
    await rejectsWithCode(w.engine.forkRun(source.id, { fromStep: 'a', extra: 1 } as never), 'INVALID_INPUT', 'an unknown option');
    await rejectsWithCode(w.engine.forkRun(source.id, { fromStep: 'a', input: () => 1 }), 'NOT_SERIALIZABLE', 'an input that is not JSON');
    assert.equal((await w.raw.runs.list({})).runs.length, before, 'no run was written');
  }),
]);
