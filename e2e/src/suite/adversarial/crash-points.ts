import assert from 'node:assert/strict';
import { defineWorkflow, type WorkflowDefinition } from '@cairn/core';
import { FAULT_POINTS, type FaultPoint } from '@cairn/core/testing';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { engineWorld } from '../engine/engine-world.js';
import { CrashOnceAtSite } from '../fixtures/crash-at.js';
import { assertEachStepOnce } from './duplicate-delivery.js';
import { livenessCases } from './liveness.js';

const EXPECTED_OUTPUT = { a: 1, q: 2, p1: 3, p2: 4 };

/** A workflow touching every kind of fault site: inline, queued and parallel steps, state, a sleep. */
function crashWorkflow(ran: Record<string, number>): WorkflowDefinition<null, unknown> {
  const body = (key: string, value: number) => () => {
    ran[key] = (ran[key] ?? 0) + 1;
    return value;
  };
  return defineWorkflow('crashy', async (ctx) => {
    const a = await ctx.step('a', body('a', 1));
    await ctx.setState('progress', 'a');
    const q = await ctx.step('q', body('q', 2), { queued: true });
    await ctx.sleep('nap', '1m');
    const [p1, p2] = await Promise.all([ctx.step('p1', body('p1', 3)), ctx.step('p2', body('p2', 4))]);
    return { a, q, p1, p2 };
  });
}

const siteName = (site: { point: FaultPoint; stepKey?: string | undefined }) =>
  `${site.point}${site.stepKey === undefined ? ' (run)' : ` (step ${site.stepKey})`}`;

async function crashAndRecover(env: CaseEnv, point: FaultPoint): Promise<void> {
  // A clean run first, to learn every site where this point is hit.
  const probe = new CrashOnceAtSite();
  const dry = await engineWorld(env, [crashWorkflow({})], { faults: probe });
  const dryRun = await dry.runToEnd((await dry.engine.startRun('crashy', null)).id);
  assert.deepEqual(dryRun.output, EXPECTED_OUTPUT);
  await dry.engine.stop();
  const sites = [...new Map(probe.hits.filter((h) => h.point === point).map((h) => [siteName(h), { point, stepKey: h.stepKey }])).values()];
  assert.ok(sites.length > 0, `the engine never hit fault point ${point}`);

  for (const target of sites) {
    const ran: Record<string, number> = {};
    const wf = crashWorkflow(ran);
    const faults = new CrashOnceAtSite(target);
    const w = await engineWorld(env, [wf], { faults });
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil(`a crash at ${siteName(target)}`, async () => faults.crashed !== undefined);
    // The process dies; what it recorded before the crash must never run again.
    await w.engine.stop();
    const recorded = (await w.raw.steps.load(handle.id)).filter((s) => s.status === 'succeeded' && s.kind === 'task').map((s) => s.key);
    const ranBefore = { ...ran };
    const survivor = await w.startEngine([wf]);
    const run = await w.runToEnd(handle.id);
    const where = `after a crash at ${siteName(target)}`;
    assert.equal(run.status, 'completed', where);
    assert.deepEqual(run.output, EXPECTED_OUTPUT, where);
    await assertEachStepOnce(w, handle.id);
    assert.deepEqual(await w.raw.state.get(handle.id), { progress: 'a' }, where);
    for (const key of recorded) assert.equal(ran[key], ranBefore[key], `${where}: step ${key} was recorded before the crash and must not run again`);
    for (const [key, count] of Object.entries(ran)) assert.ok(count <= 2, `${where}: step ${key} ran ${count} times`);
    if ((point === 'after-step-body' || point === 'before-checkpoint') && target.stepKey !== undefined) {
      assert.equal(ran[target.stepKey], 2, `${where}: the crashed attempt's body runs again`);
    }
    await survivor.stop();
  }
}

/** Emits around a step, a sleep and two branches, then closes the stream. */
function streamingWorkflow(ran: Record<string, number>): WorkflowDefinition<null, unknown> {
  return defineWorkflow('crashy-stream', async (ctx) => {
    await ctx.emit('out', 'start');
    const a = await ctx.step('a', () => {
      ran.a = (ran.a ?? 0) + 1;
      return 1;
    });
    await ctx.emit('out', { a });
    await ctx.sleep('nap', '1m');
    await Promise.all([ctx.emit('out', 'left'), ctx.emit('side', 'right')]);
    await ctx.closeStream('out');
    return 'done';
  });
}

const STREAMED = [
  [0, 'start'],
  [1, { a: 1 }],
  [2, 'left'],
];

/** A crash before and after every stream write, then recovery: each stream holds each chunk once, in order. */
async function crashInStreams(env: CaseEnv): Promise<void> {
  const probe = new CrashOnceAtSite();
  const dry = await engineWorld(env, [streamingWorkflow({})], { faults: probe });
  await dry.runToEnd((await dry.engine.startRun('crashy-stream', null)).id);
  await dry.engine.stop();
  const sites = [
    ...new Map(
      probe.hits
        .filter((h) => h.stepKey?.startsWith('stream:') && h.point.endsWith('-checkpoint'))
        .map((h) => [siteName(h), { point: h.point, stepKey: h.stepKey }]),
    ).values(),
  ];
  assert.equal(sites.length, 10, 'before and after each of the five stream writes');
  for (const target of sites) {
    const ran: Record<string, number> = {};
    const wf = streamingWorkflow(ran);
    const faults = new CrashOnceAtSite(target);
    const w = await engineWorld(env, [wf], { faults });
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil(`a crash at ${siteName(target)}`, async () => faults.crashed !== undefined);
    await w.engine.stop();
    const survivor = await w.startEngine([wf]);
    const run = await w.runToEnd(handle.id);
    const where = `after a crash at ${siteName(target)}`;
    assert.equal(run.status, 'completed', where);
    const streams = w.raw.streams;
    assert.ok(streams, 'the case requires streams');
    const out = await streams.read(handle.id, 'out', 0, 100);
    assert.deepEqual(
      out.map((e) => (e.closed ? 'end' : [e.index, e.data])),
      [...STREAMED, 'end'],
      `${where}: the stream holds each chunk once, in order, then its end`,
    );
    assert.deepEqual(
      (await streams.read(handle.id, 'side', 0, 100)).map((e) => [e.index, e.data]),
      [[0, 'right']],
      where,
    );
    assert.equal(ran.a, 1, `${where}: the step ran once`);
    await survivor.stop();
  }
}

/**
 * Adversarial: a crash at every engine fault point, then recovery by another process: the run
 * completes with each step once, and (liveness) within the bound of the crash.
 */
export const crashPointsGroup: CaseGroup = caseGroup('adversarial.crash-points', 'adversarial: crash at every fault point, then recovery', [
  ...FAULT_POINTS.map((point) =>
    conformanceCase(`crash at every ${point} site: the run completes, each step succeeded exactly once`, (env) => crashAndRecover(env, point)),
  ),
  conformanceCase('crash before and after every stream write: each chunk is stored once, in order', crashInStreams, { requires: ['streams'] }),
  ...livenessCases,
]);
