// The engine side of flow control that no backend changes (the cases every backend runs are the
// conformance group engine.flow-control): a store without slots refuses limited workflows, and a
// run's priority goes with every job the engine sends for it. The queue is the real local queue,
// wrapped only to read what it was sent.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, it } from 'node:test';
import { CAIRN_CHANNELS, CairnError, createEngine, createLocalQueue, createMemoryStore, defineWorkflow, type RunLifecycleEvent } from '@cairn/core';
import type { Queue, SendOptions, WorkflowStore } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';

const quiet = { warn: () => {}, error: () => {} };

/** The memory store without its slots, as a backend that has not adopted them yet. */
function withoutSlots(store: WorkflowStore): WorkflowStore {
  return Object.assign(Object.create(store) as WorkflowStore, { slots: undefined });
}

/** A real local queue whose sends are recorded (queue name, run id, priority). */
function recordingQueue(clock: ManualClock): { queue: Queue; sent: { queue: string; runId: unknown; priority: number | undefined }[] } {
  const local = createLocalQueue({ clock });
  const sent: { queue: string; runId: unknown; priority: number | undefined }[] = [];
  const queue: Queue = {
    name: local.name,
    capabilities: local.capabilities,
    send: (name, payload, options?: SendOptions) => {
      sent.push({ queue: name, runId: (payload as { runId?: unknown }).runId, priority: options?.priority });
      return local.send(name, payload, options);
    },
    work: (name, handler, options) => local.work(name, handler, options),
    close: () => local.close(),
  };
  return { queue, sent };
}

describe('engine flow control', () => {
  it('a store without slots refuses a workflow with a concurrency or rate limit at createEngine (INVALID_INPUT)', () => {
    const store = withoutSlots(createMemoryStore());
    for (const options of [{ concurrency: { limit: 1 } }, { rateLimit: { limit: 1, period: '1s' as const } }]) {
      const limited = defineWorkflow('limited', async () => 1, options);
      assert.throws(
        () => createEngine({ store, workflows: [limited], logger: quiet }),
        (error: unknown) => CairnError.is(error, 'INVALID_INPUT'),
      );
    }
    // Without limits it is fine.
    createEngine({ store, workflows: [defineWorkflow('free', async () => 1)], logger: quiet });
  });

  it('timings.slotRecheckMs must be a duration of at least 1 ms (INVALID_INPUT otherwise: 0 would spin)', () => {
    const store = createMemoryStore();
    for (const slotRecheckMs of [0, -1, Number.NaN, '1s']) {
      assert.throws(
        () => createEngine({ store, workflows: [], logger: quiet, timings: { slotRecheckMs: slotRecheckMs as number } }),
        (error: unknown) => CairnError.is(error, 'INVALID_INPUT'),
        String(slotRecheckMs),
      );
    }
    createEngine({ store, workflows: [], logger: quiet, timings: { slotRecheckMs: 1 } });
  });

  it("a run's priority goes with its start, its wake-up after a sleep, its queued steps and its children, which inherit it", async () => {
    const clock = new ManualClock({ start: Date.UTC(2026, 11, 3) });
    const { queue, sent } = recordingQueue(clock);
    const child = defineWorkflow('child', async () => 'child done');
    const parent = defineWorkflow('parent', async (ctx) => {
      await ctx.sleep('nap', '1m');
      await ctx.step('queued', () => 1, { queued: true });
      return ctx.child(child, null);
    });
    const store = createMemoryStore();
    const engine = createEngine({ store, queue, clock, workflows: [parent, child], logger: quiet, recoveryIntervalMs: 3_600_000 });
    await engine.start();
    try {
      const run = await engine.startRun(parent, null, { priority: 7 });
      for (let i = 0; i < 50 && (await store.runs.get(run.id))?.status !== 'completed'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        await clock.advanceToNextTimer();
      }
      assert.equal((await store.runs.get(run.id))?.status, 'completed');
      const { runs } = await store.runs.list({ workflow: 'child', limit: 10 });
      assert.equal(runs.length, 1);
      assert.equal((await store.runs.get(runs[0]!.id))?.priority, 7, "the child took its parent's priority");
      assert.ok(sent.length >= 4, `a start, a wake-up, a step job and a child start at least: ${JSON.stringify(sent)}`);
      assert.deepEqual(
        sent.filter((s) => s.priority !== 7),
        [],
        'every job was sent at priority 7',
      );
      // Priority 0 is the default: sent with none.
      const plain = await engine.startRun(child, null);
      assert.equal(sent.at(-1)?.runId, plain.id);
      assert.equal(sent.at(-1)?.priority, undefined);
      assert.equal((await store.runs.get(plain.id))?.priority, undefined);
    } finally {
      await engine.stop();
    }
  });

  it('a run that waited for its slot publishes run.started once, when it starts, and no run.resumed', async () => {
    const events: RunLifecycleEvent[] = [];
    const onRun = (message: unknown) => void events.push(message as RunLifecycleEvent);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const one = defineWorkflow('one-at-a-time', async (ctx, first: boolean) => ctx.step('work', () => (first ? (holding(), gate) : undefined)), {
      concurrency: { limit: 1 },
    });
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [one], logger: quiet, recoveryIntervalMs: 3_600_000 });
    subscribe(CAIRN_CHANNELS.run, onRun);
    await engine.start();
    try {
      const holder = await engine.startRun(one, true);
      // The waiter starts once the holder's body runs (it holds the slot): two executions that
      // begin together race for the free slot, and either may win.
      await held;
      const waiter = await engine.startRun(one, false);
      for (let i = 0; i < 200 && (await store.runs.get(waiter.id))?.status !== 'waiting'; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal((await store.runs.get(waiter.id))?.status, 'waiting', 'the second run waits for the slot');
      open();
      await holder.result();
      await waiter.result();
      const seen = events.filter((e) => e.runId === waiter.id).map((e) => e.type);
      assert.deepEqual(seen, ['run.created', 'run.started', 'run.completed']);
    } finally {
      unsubscribe(CAIRN_CHANNELS.run, onRun);
      await engine.stop();
    }
  });
});
