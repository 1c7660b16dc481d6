import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Json, createEngine, createLocalQueue, createMemoryStore, defineWorkflow } from '@cairn/core';
import { type Queue, type RunTransition, type SendOptions, type WorkOptions, computeQueueNames } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';
import { countingStore, createFixture, rejectsWithCode, turns, waitForStatus } from './helpers/engine-fixture.js';

/** A local queue that records what the engine asks of it. */
function spyQueue(inner: Queue = createLocalQueue({ clock: new ManualClock() })) {
  const sent: Array<{ queue: string; payload: Json; options: SendOptions | undefined }> = [];
  const worked: Array<{ queue: string; options: WorkOptions | undefined }> = [];
  const queue: Queue = {
    name: inner.name,
    capabilities: inner.capabilities,
    send: (name, payload, options) => {
      sent.push({ queue: name, payload, options });
      return inner.send(name, payload, options);
    },
    work: (name, handler, options) => {
      worked.push({ queue: name, options });
      return inner.work(name, handler, options);
    },
    close: () => inner.close(),
  };
  return { queue, sent, worked };
}

describe('shared-groups strategy', () => {
  it('isolates workflows by job group: a small group’s runs complete while a 100x bigger backlog is mostly pending', async (t) => {
    const clock = new ManualClock();
    const counter = countingStore();
    const active = { big: 0, small: 0 };
    const peak = { big: 0, small: 0 };
    const body = (group: 'big' | 'small') => async () => {
      active[group]++;
      peak[group] = Math.max(peak[group], active[group]);
      await turns(2); // some real async work
      active[group]--;
      return group;
    };
    const big = defineWorkflow('big', async (ctx) => ctx.step('work', body('big')));
    const small = defineWorkflow('small', async (ctx) => ctx.step('work', body('small')));
    // Completion order, as the store sees it.
    const bigIds = new Set<string>();
    const smallIds = new Set<string>();
    const completions: Array<'big' | 'small'> = [];
    counter.intercept('runs.transition', async (original, runId: string, fence: number, transition: RunTransition, now: number) => {
      const result = await original(runId, fence, transition, now);
      if (transition.to === 'completed') completions.push(bigIds.has(runId) ? 'big' : smallIds.has(runId) ? 'small' : (assert.fail('unknown run') as never));
      return result;
    });
    const fx = await createFixture({ workflows: [big, small], clock, counter, queueStrategy: 'shared-groups', concurrency: 4, groupConcurrency: 2 });
    try {
      const BIG = 500;
      const SMALL = 5;
      for (let i = 0; i < BIG; i++) bigIds.add((await fx.engine.startRun(big, null)).id);
      for (let i = 0; i < SMALL; i++) smallIds.add((await fx.engine.startRun(small, null)).id);
      for (const id of smallIds) await waitForStatus(fx.inner, id, 'completed');
      const bigDoneWhenSmallDone = completions.filter((c) => c === 'big').length;
      // Worst wait of a small run: how many big runs completed before it did.
      const waits: number[] = [];
      let bigSoFar = 0;
      for (const c of completions) {
        if (c === 'big') bigSoFar++;
        else waits.push(bigSoFar);
      }
      t.diagnostic(
        `small runs completed after ${waits.join(', ')} big runs (worst wait: ${Math.max(...waits)} of ${BIG}); big runs done when the last small one finished: ${bigDoneWhenSmallDone}`,
      );
      assert.equal(waits.length, SMALL);
      assert.ok(Math.max(...waits) <= BIG / 20, `worst wait ${Math.max(...waits)} big runs`);
      assert.ok(bigDoneWhenSmallDone < BIG / 2, 'the big backlog is still mostly pending');
      for (const id of bigIds) await waitForStatus(fx.inner, id, 'completed', 200_000);
      assert.equal(completions.length, BIG + SMALL);
      // The cap held, and was used.
      assert.deepEqual(peak, { big: 2, small: 2 });
    } finally {
      await fx.engine.stop();
    }
  });

  it('per-tier group caps apply (workflow option `tier`)', async () => {
    const active: Record<string, number> = { plain: 0, gold: 0 };
    const peak: Record<string, number> = { plain: 0, gold: 0 };
    const body = (group: string) => async () => {
      active[group]!++;
      peak[group] = Math.max(peak[group]!, active[group]!);
      await turns(3);
      active[group]!--;
    };
    const plain = defineWorkflow('plain', async (ctx) => ctx.step('work', body('plain')));
    const gold = defineWorkflow('gold', async (ctx) => ctx.step('work', body('gold')), { tier: 'gold' });
    const spy = spyQueue();
    const fx = await createFixture({
      workflows: [plain, gold],
      queue: spy.queue,
      queueStrategy: 'shared-groups',
      concurrency: 10,
      groupConcurrency: { default: 1, tiers: { gold: 3 } },
    });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await fx.engine.startRun(i % 2 ? gold : plain, null)).id);
      for (const id of ids) await waitForStatus(fx.inner, id, 'completed');
      assert.deepEqual(peak, { plain: 1, gold: 3 });
      assert.deepEqual(
        spy.worked.map((w) => w.queue),
        ['wf-orchestrator', 'wf-step'],
      );
      assert.deepEqual(spy.worked[0]!.options, { concurrency: 10, groupConcurrency: { default: 1, tiers: { gold: 3 } } });
      const groups = new Set(spy.sent.map((s) => JSON.stringify(s.options?.group)));
      assert.deepEqual([...groups].sort(), [JSON.stringify({ id: 'gold', tier: 'gold' }), JSON.stringify({ id: 'plain' })]);
    } finally {
      await fx.engine.stop();
      await spy.queue.close();
    }
  });

  it('a queue without the `groups` capability makes engine.start() reject with QUEUE_UNSUPPORTED, registering nothing', async () => {
    const inner = createLocalQueue();
    const noGroups: Queue = { ...spyQueue(inner).queue, capabilities: { ...inner.capabilities, groups: false } };
    const wf = defineWorkflow('w', async () => 1);
    const counter = countingStore();
    const engine = createEngine({ store: counter, queue: noGroups, workflows: [wf], queueStrategy: 'shared-groups' });
    const err = await rejectsWithCode(engine.start(), 'QUEUE_UNSUPPORTED');
    assert.match(err.message, /per-workflow/);
    assert.equal(counter.calls.length, 0, 'nothing written');
    // The same queue is fine for per-workflow.
    const ok = createEngine({ store: counter, queue: noGroups, workflows: [wf] });
    await ok.start();
    await ok.stop();
    await inner.close();
  });
});

describe('per-workflow strategy and queue names', () => {
  it('each workflow gets wf-orchestrator-<name> and wf-step-<name>, with the prefix, and jobs carry no group', async () => {
    const orders = defineWorkflow('orders', async (ctx) => ctx.step('ship', () => 'shipped', { queued: true }));
    const odd = defineWorkflow('a b/c', async (ctx) => ctx.step('x', () => 1));
    const spy = spyQueue();
    const fx = await createFixture({ workflows: [orders, odd], queue: spy.queue, queuePrefix: 'prod.' });
    try {
      assert.deepEqual(
        spy.worked.map((w) => w.queue),
        ['prod.wf-orchestrator-orders', 'prod.wf-step-orders', 'prod.wf-orchestrator-a_b_c', 'prod.wf-step-a_b_c'],
      );
      const h = await fx.engine.startRun(orders, null);
      await waitForStatus(fx.inner, h.id, 'completed');
      const queues = new Set(spy.sent.map((s) => s.queue));
      assert.deepEqual([...queues].sort(), ['prod.wf-orchestrator-orders', 'prod.wf-step-orders']);
      assert.ok(spy.sent.every((s) => s.options?.group === undefined));
    } finally {
      await fx.engine.stop();
      await spy.queue.close();
    }
  });

  it('two workflow names that map to one queue (`a b` vs `a_b`) are refused with QUEUE_NAME_COLLISION', async () => {
    const a = defineWorkflow('a b', async () => 1);
    const b = defineWorkflow('a_b', async () => 2);
    const store = createMemoryStore();
    assert.throws(
      () => createEngine({ store, workflows: [a, b] }),
      (error: { code?: string; data?: { workflows?: string[] } }) => error.code === 'QUEUE_NAME_COLLISION' && error.data?.workflows?.join('|') === 'a b|a_b',
    );
    assert.throws(
      () => computeQueueNames('per-workflow', ['x.y', 'x y', 'x_y']),
      (error: { code?: string }) => error.code === 'QUEUE_NAME_COLLISION',
    );
    // Two versions of one workflow are one name, not a collision; shared-groups has no per-name queues.
    assert.deepEqual([...computeQueueNames('per-workflow', ['a_b', 'a_b'])], [['a_b', { orchestrator: 'wf-orchestrator-a_b', step: 'wf-step-a_b' }]]);
    const shared = createEngine({ store, workflows: [a, b], queueStrategy: 'shared-groups' });
    await shared.start({ workers: false });
    await shared.stop();
    assert.deepEqual(
      [...computeQueueNames('shared-groups', ['a b', 'a_b'])].map(([, q]) => q),
      [
        { orchestrator: 'wf-orchestrator', step: 'wf-step' },
        { orchestrator: 'wf-orchestrator', step: 'wf-step' },
      ],
    );
  });
});
