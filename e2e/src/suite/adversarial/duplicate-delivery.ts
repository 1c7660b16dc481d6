import assert from 'node:assert/strict';
import { createLocalQueue, defineWorkflow, type WorkflowDefinition } from '@cairn/core';
import { computeQueueNames, type AttemptRecord } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup, type CaseEnv } from '../case.js';
import { duplicatingQueue } from '../fixtures/duplicating-queue.js';
import { lossyRenewals } from '../fixtures/lossy-renewals.js';
import { engineWorld, WORLD_TIMINGS, type EngineWorld } from '../engine/engine-world.js';

/** Asserts every step of the run succeeded and has exactly one succeeded attempt. */
export async function assertEachStepOnce(w: EngineWorld, runId: string): Promise<void> {
  const steps = await w.raw.steps.load(runId);
  const history = await w.raw.history.list(runId);
  for (const step of steps) {
    assert.equal(step.status, 'succeeded', `step ${step.key} must have succeeded`);
    if (step.kind !== 'task') continue;
    const won = history.filter((a: AttemptRecord) => a.stepKey === step.key && a.status === 'succeeded');
    assert.equal(won.length, 1, `step ${step.key} must have exactly one succeeded attempt, has ${won.length}`);
  }
  const open = history.filter((a) => a.status === 'running');
  assert.deepEqual(
    open.map((a) => `${a.stepKey}#${a.attempt}`),
    [],
    'no attempt may be left running',
  );
}

function countingWorkflow(name: string, ran: Record<string, number>): WorkflowDefinition<null, unknown> {
  const body = (key: string, value: unknown) => () => {
    ran[key] = (ran[key] ?? 0) + 1;
    return value;
  };
  return defineWorkflow(name, async (ctx) => {
    const a = await ctx.step('a', body('a', 1));
    const q = await ctx.step('q', body('q', 2), { queued: true });
    await ctx.sleep('nap', '1m');
    const [p1, p2] = await Promise.all([ctx.step('p1', body('p1', 3)), ctx.step('p2', body('p2', 4), { queued: true })]);
    await ctx.setState('done', true);
    return { a, q, p1, p2 };
  });
}

async function everyJobTwice(env: CaseEnv, peers: boolean): Promise<void> {
  const ran: Record<string, number> = {};
  const wf = countingWorkflow('dup-delivery', ran);
  // The first engine only starts runs; two "processes" share a queue that delivers every job twice.
  const w = await engineWorld(env, [wf], { noWorkers: true });
  const queue = duplicatingQueue(createLocalQueue({ clock: w.clock }));
  env.defer(() => queue.close());
  await w.startEngine([wf], { queue });
  await w.startEngine([wf], { queue, ...(peers ? { store: await env.openPeer() } : {}) });
  const handles = [];
  for (let i = 0; i < 3; i += 1) {
    const handle = await w.engine.startRun(wf, null);
    // The run's own first job went to the idle engine; deliver it (twice) to the two processes.
    await queue.send(computeQueueNames('per-workflow', [wf.name]).get(wf.name)!.orchestrator, { runId: handle.id });
    handles.push(handle);
  }
  for (const handle of handles) {
    const run = await w.runToEnd(handle.id);
    assert.deepEqual(run.output, { a: 1, q: 2, p1: 3, p2: 4 });
    await assertEachStepOnce(w, handle.id);
  }
  // Leases never expired here, so no body had a reason to run twice.
  assert.deepEqual(ran, { a: 3, q: 3, p1: 3, p2: 3 });
}

/** Adversarial: duplicate delivery of the same job. */
export const duplicateDeliveryGroup: CaseGroup = caseGroup('adversarial.duplicate-delivery', 'adversarial: duplicate job delivery', [
  conformanceCase('every job delivered twice to two processes at once: each step runs and is recorded once', async (env) => {
    await everyJobTwice(env, false);
  }),

  conformanceCase(
    'every job delivered twice to two processes on two store instances',
    async (env) => {
      await everyJobTwice(env, true);
    },
    { requires: ['multiProcess'] },
  ),

  conformanceCase('a zombie whose lease ran out cannot record over the worker that took over', async (env) => {
    const ran: Record<string, number> = {};
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wf = defineWorkflow('dup-zombie', async (ctx) => {
      const a = await ctx.step('a', () => ((ran.a = (ran.a ?? 0) + 1), 'a'));
      const slow = await ctx.step('slow', async () => {
        ran.slow = (ran.slow ?? 0) + 1;
        // The first execution stalls here (a long GC pause) while its lease runs out.
        if (ran.slow === 1) {
          await gate;
          return 'zombie';
        }
        return 'successor';
      });
      const c = await ctx.step('c', () => ((ran.c = (ran.c ?? 0) + 1), 'c'));
      return [a, slow, c];
    });
    const w = await engineWorld(env, [wf], { noWorkers: true });
    const lossy = lossyRenewals(env.store);
    const zombie = await w.startEngine([wf], { store: lossy.store });
    const handle = await zombie.startRun(wf, null);
    await w.settle();
    const first = await w.raw.runs.get(handle.id);
    assert.equal(first?.status, 'running', 'the first worker is inside the slow step');
    lossy.drop();
    await w.startEngine([wf]);
    await w.clock.advance(WORLD_TIMINGS.leaseMs + 1);
    const run = await w.runToEnd(handle.id);
    assert.deepEqual(run.output, ['a', 'successor', 'c']);
    // The zombie wakes up and tries to record its result with its old fence.
    release();
    await w.settle();
    const after = await w.raw.runs.get(handle.id);
    assert.equal(after?.status, 'completed');
    assert.deepEqual(after?.output, ['a', 'successor', 'c']);
    assert.equal((await w.raw.steps.load(handle.id)).find((s) => s.key === 'slow')?.output, 'successor');
    await assertEachStepOnce(w, handle.id);
    assert.deepEqual(
      (await w.raw.history.list(handle.id)).filter((a) => a.stepKey === 'slow').map((a) => [a.attempt, a.status]),
      [
        [1, 'abandoned'],
        [2, 'succeeded'],
      ],
    );
    assert.deepEqual(ran, { a: 1, slow: 2, c: 1 });
  }),
]);
