import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld, WORLD_RECOVERY_MS } from './engine-world.js';

const HOUR = 3_600_000;

/** Engine scenarios: `engine.pause` / `resume`, `pauseWorkflow` / `resumeWorkflow` (docs/semantics.md). */
export const pauseResumeGroup: CaseGroup = caseGroup('engine.pause-resume', 'engine: pause and resume', [
  conformanceCase(
    'a timer that fires while the run is paused waits; resumed, the run continues and ends as it would have',
    async (env) => {
      const ran: string[] = [];
      const wf = defineWorkflow('pause-sleeping', async (ctx) => {
        await ctx.step('before', () => ran.push('before'));
        await ctx.sleep('nap', '1h');
        const after = await ctx.step('after', () => (ran.push('after'), 'after'));
        return { after };
      });
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, null);
      await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
      const { run, changed } = await w.engine.pause(handle.id, { reason: 'maintenance' });
      assert.equal(changed, true);
      assert.equal(run.paused?.reason, 'maintenance');
      assert.equal(run.paused?.scope, 'run');
      await w.clock.advance(3 * HOUR);
      await w.settle();
      await w.clock.advance(WORLD_RECOVERY_MS);
      await w.settle();
      assert.deepEqual(ran, ['before'], 'nothing after the timer ran while paused');
      assert.equal((await w.raw.runs.get(handle.id))?.status, 'waiting');
      const resumed = await w.engine.resume(handle.id);
      assert.equal(resumed.changed, true);
      const ended = await w.runToEnd(handle.id);
      assert.equal(ended.status, 'completed');
      assert.deepEqual(ended.output, { after: 'after' });
      assert.deepEqual(ran, ['before', 'after'], 'each step ran once');
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'a step body running when the pause arrives finishes and is recorded; the run stops before its next primitive',
    async (env) => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const ran: string[] = [];
      let aborted = false;
      const wf = defineWorkflow('pause-running', async (ctx) => {
        const slow = await ctx.step('slow', async (step) => {
          await gate;
          aborted = step.signal.aborted;
          ran.push('slow');
          return 'slow done';
        });
        await ctx.step('next', () => ran.push('next'));
        return slow;
      });
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, null);
      await w.settle();
      assert.equal((await w.raw.runs.get(handle.id))?.status, 'running');
      await w.engine.pause(handle.id);
      release();
      await w.settle();
      await w.clock.advance(WORLD_RECOVERY_MS);
      await w.settle();
      assert.equal(aborted, false, "a pause does not abort the running body's signal");
      assert.deepEqual(ran, ['slow'], 'the next step did not start');
      const steps = await w.raw.steps.load(handle.id);
      assert.deepEqual(
        steps.map((s) => [s.key, s.status, s.output]),
        [['slow', 'succeeded', 'slow done']],
        'the running body was recorded',
      );
      const paused = await w.raw.runs.get(handle.id);
      assert.equal(paused?.status, 'waiting', 'the execution suspended and gave its lease back');
      assert.equal(paused?.lease, undefined);
      await w.engine.resume(handle.id);
      const ended = await w.runToEnd(handle.id);
      assert.equal(ended.status, 'completed');
      assert.equal(ended.output, 'slow done');
      assert.deepEqual(ran, ['slow', 'next']);
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'a run paused before any worker claimed it is not executed until resumed',
    async (env) => {
      let runs = 0;
      const wf = defineWorkflow('pause-pending', async (ctx) => ctx.step('only', () => ++runs));
      const w = await engineWorld(env, [wf], { noWorkers: true });
      const handle = await w.engine.startRun(wf, null);
      await w.engine.pause(handle.id);
      await w.startEngine([wf]);
      for (let i = 0; i < 3; i++) {
        await w.clock.advance(WORLD_RECOVERY_MS);
        await w.settle();
      }
      assert.equal(runs, 0);
      const paused = await w.raw.runs.get(handle.id);
      assert.equal(paused?.status, 'pending');
      assert.equal(paused?.fence, 0, 'never claimed');
      await w.engine.resume(handle.id);
      const ended = await w.runToEnd(handle.id);
      assert.equal(ended.status, 'completed');
      assert.equal(runs, 1);
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'pauseWorkflow pauses every run of it and the runs started meanwhile (accepted, waiting); resumeWorkflow lifts only its own pauses',
    async (env) => {
      const ran: string[] = [];
      const wf = defineWorkflow('pause-fleet', async (ctx, input: string) => {
        await ctx.sleep('nap', '1h');
        await ctx.step('after', () => ran.push(input));
        return input;
      });
      const other = defineWorkflow('pause-fleet-other', async (ctx) => ctx.step('x', () => 'x'));
      const w = await engineWorld(env, [wf, other]);
      const a = await w.engine.startRun(wf, 'a');
      const b = await w.engine.startRun(wf, 'b');
      await w.runUntil('both sleep', async () => (await w.raw.runs.get(a.id))?.status === 'waiting' && (await w.raw.runs.get(b.id))?.status === 'waiting');
      await w.engine.pause(b.id, { reason: 'on its own' });
      const result = await w.engine.pauseWorkflow(wf.name, { reason: 'bank down' });
      assert.equal(result.changed, true);
      assert.equal(result.runsPaused, 1, 'a is paused by the workflow; b was paused already');
      const c = await w.engine.startRun(wf, 'c');
      assert.equal((await w.engine.pauseWorkflow(wf.name)).changed, false, 'pausing a paused workflow changes nothing');
      const o = await w.engine.startRun(other, null);
      assert.equal((await w.runToEnd(o.id)).status, 'completed', 'another workflow runs on');
      await w.clock.advance(2 * HOUR);
      await w.settle();
      await w.clock.advance(WORLD_RECOVERY_MS);
      await w.settle();
      assert.deepEqual(ran, [], 'no run of the paused workflow went on');
      const cRun = await w.raw.runs.get(c.id);
      assert.ok(cRun?.paused, 'a run started while the workflow is paused is paused');
      assert.equal(cRun?.paused?.scope, 'workflow');
      assert.equal((await w.engine.getWorkflowPause(wf.name))?.reason, 'bank down');
      const lifted = await w.engine.resumeWorkflow(wf.name);
      assert.equal(lifted.changed, true);
      assert.equal(lifted.runsResumed, 2, 'a and c');
      await w.runToEnd(a.id);
      await w.runToEnd(c.id);
      assert.deepEqual([...ran].sort(), ['a', 'c']);
      assert.equal((await w.raw.runs.get(b.id))?.paused?.scope, 'run', 'b, paused on its own, stays paused');
      await w.engine.resume(b.id);
      assert.equal((await w.runToEnd(b.id)).output, 'b');
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'pausing is not cancelling: the deadline keeps counting while paused and fails the run at resume',
    async (env) => {
      const wf = defineWorkflow('pause-deadline', async (ctx) => {
        await ctx.sleep('nap', '10m');
        return 'done';
      });
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, null, { deadline: '1h' });
      await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
      await w.engine.pause(handle.id);
      await w.clock.advance(2 * HOUR);
      await w.settle();
      assert.equal((await w.raw.runs.get(handle.id))?.status, 'waiting', 'a paused run is not failed while paused');
      await w.engine.resume(handle.id);
      const ended = await w.runToEnd(handle.id);
      assert.equal(ended.status, 'failed');
      assert.equal(ended.error?.code, 'DEADLINE_EXCEEDED');
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'bad input: unknown run, ended run, a bad reason are refused with nothing written; pausing twice and resuming an unpaused run write nothing',
    async (env) => {
      const wf = defineWorkflow('pause-bad-input', async (ctx) => {
        await ctx.sleep('nap', '1h');
        return 'done';
      });
      const done = defineWorkflow('pause-bad-input-done', async () => 'done');
      const w = await engineWorld(env, [wf, done]);
      await rejectsWithCode(w.engine.pause('01900000-0000-7000-8000-000000000000'), 'RUN_NOT_FOUND');
      await rejectsWithCode(w.engine.resume('01900000-0000-7000-8000-000000000000'), 'RUN_NOT_FOUND');
      const ended = await w.engine.startRun(done, null);
      await w.runToEnd(ended.id);
      const endedBefore = await w.raw.runs.get(ended.id);
      await rejectsWithCode(w.engine.pause(ended.id), 'RUN_CONFLICT');
      await rejectsWithCode(w.engine.resume(ended.id), 'RUN_CONFLICT');
      assert.deepEqual(await w.raw.runs.get(ended.id), endedBefore);
      const handle = await w.engine.startRun(wf, null);
      await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
      await rejectsWithCode(w.engine.pause(handle.id, { reason: 42 as unknown as string }), 'INVALID_INPUT');
      await rejectsWithCode(w.engine.pause(handle.id, { why: 'x' } as never), 'INVALID_INPUT');
      await rejectsWithCode(w.engine.pauseWorkflow(''), 'INVALID_INPUT');
      assert.equal((await w.raw.runs.get(handle.id))?.paused, undefined, 'refused pauses wrote nothing');
      const unpaused = await w.raw.runs.get(handle.id);
      const notPaused = await w.engine.resume(handle.id);
      assert.equal(notPaused.changed, false);
      assert.deepEqual(await w.raw.runs.get(handle.id), unpaused, 'resuming a run that is not paused writes nothing');
      await w.engine.pause(handle.id, { reason: 'first' });
      const before = await w.raw.runs.get(handle.id);
      const twice = await w.engine.pause(handle.id, { reason: 'second' });
      assert.equal(twice.changed, false);
      assert.equal(twice.run.paused?.reason, 'first');
      assert.deepEqual(await w.raw.runs.get(handle.id), before, 'pausing twice writes nothing');
      assert.equal((await w.engine.resumeWorkflow(wf.name)).changed, false, 'resuming a workflow that is not paused changes nothing');
    },
    { requires: ['pauses'] },
  ),
]);
