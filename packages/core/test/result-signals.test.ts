// result() of a run executing in another engine, over the memory store's real signals with a fault
// injected: the listener is lost (onLost) and comes back (onSignal() without a message), as a
// broken and re-established connection of a server store would. The waiter runs on a ManualClock,
// so every read it makes is counted against the time it was given.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEngine, createMemoryStore, defineWorkflow, isTerminalRunStatus, type RunRecord } from '@cairn/core';
import { countingStore, RESULT_RECHECK_MS, type CountingStore, type StoreSignals, type WorkflowStore } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';

const quiet = { warn: () => {}, error: () => {} };
const RECOVERY_MS = 600_000;
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** The store's signals, with a switch that loses the listener (nothing delivered, onLost called) and brings it back. */
function losable(store: WorkflowStore): { store: WorkflowStore; lose(): void; restore(): void } {
  const signals = store.signals as StoreSignals;
  let down = false;
  const listeners = new Set<{ onSignal: (m?: string) => void; onLost?: () => void }>();
  const wrapped: StoreSignals = {
    notify: (topic, message) => signals.notify(topic, message),
    listen: async (topic, onSignal, onLost) => {
      const entry = { onSignal, ...(onLost ? { onLost } : {}) };
      listeners.add(entry);
      const stop = await signals.listen(topic, (message) => {
        if (!down) onSignal(message);
      });
      return async () => {
        listeners.delete(entry);
        await stop();
      };
    },
  };
  return {
    store: Object.assign(Object.create(store) as WorkflowStore, { signals: wrapped }),
    lose() {
      down = true;
      for (const l of listeners) l.onLost?.();
    },
    restore() {
      down = false;
      for (const l of listeners) l.onSignal();
    },
  };
}

function readsOf(counted: CountingStore, runId: string): { all: number; unended: number } {
  const reads = counted.calls.filter((c) => c.method === 'runs.get' && c.runId === runId);
  const unended = reads.filter((c) => c.outcome?.ok === true && !isTerminalRunStatus((c.outcome.value as RunRecord).status)).length;
  return { all: reads.length, unended };
}

async function until(predicate: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  assert.fail('not within 4 s');
}

const told = defineWorkflow('rs-told', async (ctx) => ctx.waitForEvent<number>('go'));

async function setup() {
  const memory = createMemoryStore();
  const lossy = losable(memory);
  const counted = countingStore(lossy.store);
  const clock = new ManualClock({ start: Date.now() });
  const waiter = createEngine({ store: counted, workflows: [told], clock, recoveryIntervalMs: RECOVERY_MS, logger: quiet });
  const worker = createEngine({ store: memory, workflows: [told], recoveryIntervalMs: RECOVERY_MS, logger: quiet });
  await worker.start();
  const { id } = await worker.startRun(told, null);
  await until(async () => (await memory.steps.load(id)).some((s) => s.key === 'event:go'));
  return { memory, lossy, counted, clock, waiter, worker, id, stop: async () => (await waiter.stop(), await worker.stop()) };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** A waiter's result() of the run, once it made its first read; `reads(n)` waits for its n-th read. */
async function waiting(body: (s: Setup, result: Promise<number>, reads: (n: number) => Promise<void>) => Promise<void>): Promise<void> {
  const s = await setup();
  const reads = (n: number) => until(() => readsOf(s.counted, s.id).all === n);
  try {
    const result = s.waiter.result<number>(s.id);
    await reads(1);
    await body(s, result, reads);
  } finally {
    await s.stop();
  }
}

describe('result() across engines: completion signals, and polling only while they are down', () => {
  it('reads once, then waits for the completion signal without a read, however long the clock runs', () =>
    waiting(async (s, result, reads) => {
      await s.clock.advance(RESULT_RECHECK_MS - 1);
      await turn();
      assert.equal(readsOf(s.counted, s.id).all, 1, 'no read before the re-read interval while signals are healthy');
      await s.clock.advance(1);
      await reads(2);
      await s.worker.sendEvent(s.id, 'go', 5);
      assert.equal(await result, 5);
      assert.deepEqual(readsOf(s.counted, s.id), { all: 3, unended: 2 }, 'first look, the safety re-read, the read the signal asked for');
    }));

  it('polls while the listener is lost, and stops polling once it is back', () =>
    waiting(async (s, result, reads) => {
      s.lossy.lose();
      // The loss makes the waiter look at once, then poll: 10 ms, 20 ms, 40 ms...
      await reads(2);
      for (const ms of [10, 20, 40]) await s.clock.advance(ms);
      await reads(5);
      s.lossy.restore();
      // Back: one look (signals may have been missed), then silence.
      await reads(6);
      for (let i = 0; i < 10; i++) await s.clock.advance(1_000);
      await turn();
      assert.equal(readsOf(s.counted, s.id).all, 6, 'no polling once the listener is back');
      await s.worker.sendEvent(s.id, 'go', 9);
      assert.equal(await result, 9);
    }));

  it('a run that ends while the listener is lost is found by the polling', () =>
    waiting(async (s, result, reads) => {
      s.lossy.lose();
      await reads(2);
      // Its completion signal is lost with the listener.
      await s.worker.sendEvent(s.id, 'go', 3);
      await until(async () => (await s.memory.runs.get(s.id))?.status === 'completed');
      await s.clock.advance(10);
      assert.equal(await result, 3);
    }));
});
