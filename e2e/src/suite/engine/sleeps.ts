import assert from 'node:assert/strict';
import { type Duration, type WorkflowContext, defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from './engine-world.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const YEAR = 365.25 * DAY;

// Values no store can hold, or that are not durations at all: each must be refused at the call.
const BAD_WAITS: ReadonlyArray<[label: string, call: (ctx: WorkflowContext) => Promise<unknown>, named: string]> = [
  ['sleep 1e20', (ctx) => ctx.sleep('x', 1e20), '100000000000000000000'],
  ['sleep -1', (ctx) => ctx.sleep('x', -1), '-1'],
  ['sleep NaN', (ctx) => ctx.sleep('x', Number.NaN), 'NaN'],
  ["sleep '10 minutes'", (ctx) => ctx.sleep('x', '10 minutes' as Duration), '"10 minutes"'],
  ["sleep ''", (ctx) => ctx.sleep('x', '' as Duration), '""'],
  ['sleep 100 years and 1 ms', (ctx) => ctx.sleep('x', 100 * YEAR + 1), String(100 * YEAR + 1)],
  ['sleepUntil 1e20', (ctx) => ctx.sleepUntil('x', 1e20), '100000000000000000000'],
  ['step timeout 1e20', (ctx) => ctx.step('s', () => 1, { timeout: 1e20 }), '100000000000000000000'],
  ['event timeout 1e20', (ctx) => ctx.waitForEvent('e', { timeout: 1e20 }), '100000000000000000000'],
  ['backoff delay 1e20', (ctx) => ctx.step('s', () => 1, { retries: 1, backoff: { type: 'fixed', delay: 1e20 } }), '100000000000000000000'],
];

/** Engine scenarios: durable timers. */
export const sleepsGroup: CaseGroup = caseGroup('engine.sleeps', 'engine: sleeps', [
  conformanceCase('a sleep suspends the run until its wake time, not a moment sooner', async (env) => {
    let after = 0;
    const wf = defineWorkflow('sleep-hour', async (ctx) => {
      await ctx.sleep('nap', '1h');
      after += 1;
      return 'rested';
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    const [nap] = await w.raw.steps.load(handle.id);
    assert.deepEqual([nap?.kind, nap?.status, nap?.wakeAt], ['sleep', 'waiting', env.t0 + HOUR]);
    await w.clock.advance(HOUR - 1);
    await w.settle();
    assert.equal(after, 0, 'nothing after the sleep may run before it ends');
    assert.equal((await w.raw.runs.get(handle.id))?.status, 'waiting');
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 'rested');
    assert.equal(after, 1);
    assert.equal((await w.raw.steps.load(handle.id))[0]?.status, 'succeeded');
  }),

  conformanceCase('sleepUntil a time already passed does not wait', async (env) => {
    const wf = defineWorkflow('sleep-past', async (ctx) => {
      await ctx.sleepUntil('past', env.t0 - 1);
      return 'on time';
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.settle();
    const run = await w.raw.runs.get(handle.id);
    assert.equal(run?.status, 'completed', 'completed without the clock moving');
    assert.equal(run?.output, 'on time');
  }),

  conformanceCase('parallel sleeps: the run completes once the longest one ended', async (env) => {
    const wf = defineWorkflow('sleep-parallel', async (ctx) => {
      await Promise.all([ctx.sleep('short', '1m'), ctx.sleep('long', '1h')]);
      return ctx.now();
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.ok((run.output as number) >= env.t0 + HOUR, 'the code after both sleeps runs after the longer one');
    assert.deepEqual(
      (await w.raw.steps.load(handle.id)).slice(0, 2).map((s) => [s.key, s.status, s.wakeAt]),
      [
        ['short', 'succeeded', env.t0 + MINUTE],
        ['long', 'succeeded', env.t0 + HOUR],
      ],
    );
  }),

  conformanceCase('a replay in the middle of a sleep keeps its original wake time', async (env) => {
    const wf = defineWorkflow('sleep-woken', async (ctx) => {
      await ctx.sleep('nap', '1h');
      return 'done';
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    await w.clock.advance(30 * MINUTE);
    // An event nobody waits for wakes the run: it replays and must go back to the same timer.
    await w.engine.sendEvent(handle.id, 'poke', null);
    await w.runUntil('the woken run replays', async () => (await w.raw.runs.get(handle.id))?.fence === 2);
    await w.settle();
    const run = await w.raw.runs.get(handle.id);
    assert.equal(run?.status, 'waiting');
    assert.equal(run?.wakeAt, env.t0 + HOUR, 'the timer is not restarted');
    assert.equal((await w.runToEnd(handle.id)).output, 'done');
  }),

  ...(
    [
      ['30 days', '30d', 30 * DAY],
      ['100 years', '36525d', 100 * YEAR],
    ] as const
  ).map(([label, duration, ms]) =>
    conformanceCase(`a ${label} sleep suspends the run once and wakes it once`, async (env) => {
      let after = 0;
      const wf = defineWorkflow('sleep-long', async (ctx) => {
        await ctx.sleep('long', duration);
        after += 1;
        return 'awake';
      });
      // Recovery passes every 7 years: the sleep must end by its own delayed job, not a sweep. Not
      // every 10: that divides 100 years, and on the memory and SQLite stores (passes re-armed at
      // exact multiples) the tenth pass fell on the wake instant, its findDue racing the woken
      // job's claim — a pass that looked first would dispatch the run too (a second wake claim).
      const w = await engineWorld(env, [wf], { recoveryIntervalMs: 7 * YEAR });
      const handle = await w.engine.startRun(wf, null);
      await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
      const [sleep] = await w.raw.steps.load(handle.id);
      assert.deepEqual([sleep?.status, sleep?.wakeAt, (await w.raw.runs.get(handle.id))?.wakeAt], ['waiting', env.t0 + ms, env.t0 + ms]);
      await w.clock.advance(ms - 1);
      await w.settle();
      assert.equal((await w.raw.runs.get(handle.id))?.status, 'waiting', 'not woken a millisecond early');
      assert.equal(after, 0);
      assert.equal(w.store.count('runs.claim', handle.id), 1, 'claimed once to fall asleep, then left alone');
      await w.clock.advance(1);
      const run = await w.runToEnd(handle.id, { maxTimers: 10 });
      assert.equal(run.output, 'awake');
      assert.equal(after, 1);
      assert.equal(w.store.count('runs.claim', handle.id), 2, 'one claim to fall asleep, one to wake');
    }),
  ),

  conformanceCase("a queued step with timeout '30d' keeps its 30-day deadline and succeeds", async (env) => {
    const wf = defineWorkflow('long-step-timeout', async (ctx) => ctx.step('work', () => 'done', { queued: true, timeout: '30d' }));
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 'done');
    const [attempt] = await w.engine.history(handle.id);
    assert.equal(attempt?.status, 'succeeded');
  }),

  conformanceCase('waits no store can hold, or that are not durations, fail the run with INVALID_INPUT at the call (never left running)', async (env) => {
    const workflows = BAD_WAITS.map(([label, call], i) =>
      defineWorkflow(`bad-wait-${i}`, async (ctx) => {
        await call(ctx);
        return `${label}: accepted`;
      }),
    );
    const w = await engineWorld(env, workflows);
    const outcomes: string[] = [];
    for (const [i, wf] of workflows.entries()) {
      const handle = await w.engine.startRun(wf, null);
      const run = await w.runToEnd(handle.id, { maxTimers: 20 });
      const [label, , value] = BAD_WAITS[i]!;
      const named = run.error?.message.includes(value) ?? false;
      outcomes.push(`${label}: ${run.status} ${run.error?.code ?? ''}${named ? '' : ` (value not named: ${run.error?.message})`}`);
      assert.deepEqual(await w.raw.steps.load(handle.id), [], `${label}: nothing recorded`);
    }
    assert.deepEqual(
      outcomes,
      BAD_WAITS.map(([label]) => `${label}: failed INVALID_INPUT`),
    );
  }),
]);
