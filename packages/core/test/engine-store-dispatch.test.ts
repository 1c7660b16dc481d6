// Without a distributed queue the store is the queue across engines ("processes"): a run started
// by an engine without workers is made due at once and signalled, and engines with workers that
// listen pick it up (and events and cancels) at once instead of after the start grace period or a
// recovery interval. Two engines on one memory store stand for two processes: each has its own
// local queue, so a job sent by one never reaches the other. Real clock, generous bounds: the
// recovery loop is set far beyond them, so only a signal can explain a prompt pickup.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEngine, createLocalQueue, createMemoryStore, defineWorkflow } from '@cairn/core';
import type { StoreSignals, WorkflowStore } from '@cairn/core/backend';
import { WAKE_TOPIC } from '../src/engine/wakeups/store-wakeups.js';

const quiet = { warn: () => {}, error: () => {} };
// Far beyond every bound below: the recovery loop cannot be what delivers.
const RECOVERY_MS = 600_000;
const BOUND = '10s';

/** The store with its signals counted. */
function countedSignals(store: WorkflowStore): { store: WorkflowStore; notified: string[]; listening: () => number } {
  const signals = store.signals as StoreSignals;
  const notified: string[] = [];
  let listening = 0;
  const counted: StoreSignals = {
    notify: (topic, message) => {
      // Run wake-ups only: a worker's one-off announcements of itself (decision 40) are not per
      // run, and completion hints travel on a topic of their own (RESULT_TOPIC).
      if (topic === WAKE_TOPIC && !message.startsWith('["~worker"')) notified.push(message);
      return signals.notify(topic, message);
    },
    // Wake-up listeners only: a result() waiter listens for completion hints on its own topic.
    listen: async (topic, onSignal, onLost) => {
      const wakeUps = topic === WAKE_TOPIC ? 1 : 0;
      listening += wakeUps;
      const stop = await signals.listen(topic, onSignal, onLost);
      return async () => {
        listening -= wakeUps;
        await stop();
      };
    },
  };
  return { store: Object.assign(Object.create(store) as WorkflowStore, { signals: counted }), notified, listening: () => listening };
}

async function pair(workflows: Parameters<typeof createEngine>[0]['workflows']) {
  const memory = createMemoryStore();
  assert.ok(memory.signals, 'the memory store signals within its process');
  const client = countedSignals(memory);
  const worker = countedSignals(memory);
  const api = createEngine({ store: client.store, workflows, recoveryIntervalMs: RECOVERY_MS, logger: quiet });
  const work = createEngine({ store: worker.store, workflows, recoveryIntervalMs: RECOVERY_MS, logger: quiet });
  await api.start({ workers: false });
  await work.start();
  return { memory, client, worker, api, work, stop: () => Promise.all([api.stop(), work.stop()]) };
}

/**
 * A run whose body waits for its abort, started and executed by an engine with workers; a second
 * engine (started with `canceller`) cancels it. A lease renewal (every third of the lease) would
 * observe the cancel too: the lease is set far beyond the bound, so only the signal explains it.
 */
async function cancelRunningBody(name: string, canceller: { workers?: boolean }): Promise<void> {
  let seen: unknown;
  const wf = defineWorkflow(name, async (ctx) => {
    await ctx.step(
      'wait',
      (step) => new Promise((_resolve, reject) => step.signal.addEventListener('abort', () => reject((seen = step.signal.reason)), { once: true })),
    );
  });
  const memory = createMemoryStore();
  const options = { store: memory, workflows: [wf], recoveryIntervalMs: RECOVERY_MS, timings: { leaseMs: 3_000_000 }, logger: quiet };
  const work = createEngine(options);
  const other = createEngine(options);
  await work.start();
  await other.start(canceller);
  try {
    const handle = await work.startRun(wf, null);
    for (let i = 0; i < 1000 && !(await memory.steps.load(handle.id)).some((s) => s.key === 'wait'); i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    await other.cancel(handle.id, { reason: `from ${name}` });
    await assert.rejects(work.result(handle.id, { timeout: BOUND }), (error: { code?: string }) => error.code === 'RUN_CANCELLED');
    assert.match(String((seen as Error | undefined)?.message), new RegExp(`from ${name}`));
  } finally {
    await other.stop();
    await work.stop();
  }
}

describe('the store is the queue between engines without a distributed queue', () => {
  it('a run started by an engine without workers starts on an engine with workers at once', async () => {
    const wf = defineWorkflow('sd-start', async (ctx, n: number) => ctx.step('double', () => n * 2));
    const p = await pair([wf]);
    try {
      assert.equal(p.worker.listening(), 1, 'the engine with workers listens');
      assert.equal(p.client.listening(), 0, 'the engine without workers does not');
      const handle = await p.api.startRun(wf, 21);
      assert.equal(await p.api.result(handle.id, { timeout: BOUND }), 42);
      assert.equal(p.client.notified.length, 1, 'one signal per start');
    } finally {
      await p.stop();
    }
    assert.equal(p.worker.listening(), 0, 'stop() stops listening');
  });

  it('an engine that was never started is a client: its start, event and cancel reach an engine with workers at once', async () => {
    // The trap a new user falls into (issue 32): `startRun` on an engine whose `start()` was never
    // called. Its local queue has no consumer, so the run must go through the store as a
    // `start({ workers: false })` engine's does, not sit until another worker's start grace ends.
    const wf = defineWorkflow('sd-never-started', async (ctx, n: number) => {
      const doubled = await ctx.step('double', () => n * 2);
      await ctx.waitForEvent('go');
      await ctx.waitForEvent('never');
      return doubled;
    });
    const memory = createMemoryStore();
    const client = countedSignals(memory);
    const worker = countedSignals(memory);
    const never = createEngine({ store: client.store, workflows: [wf], recoveryIntervalMs: RECOVERY_MS, logger: quiet });
    const work = createEngine({ store: worker.store, workflows: [wf], recoveryIntervalMs: RECOVERY_MS, logger: quiet });
    await work.start();
    try {
      const handle = await never.startRun(wf, 21);
      const run = await memory.runs.get(handle.id);
      assert.ok(run !== undefined && run.wakeAt !== undefined && run.wakeAt <= Date.now(), 'due in the store at once');
      for (let i = 0; i < 1000 && !(await memory.steps.load(handle.id)).some((s) => s.key === 'event:go'); i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal((await memory.steps.load(handle.id)).find((s) => s.key === 'double')?.output, 42, 'the worker ran it');
      await never.sendEvent(handle.id, 'go', null);
      for (let i = 0; i < 1000 && !(await memory.steps.load(handle.id)).some((s) => s.key === 'event:never'); i++) await new Promise((r) => setTimeout(r, 10));
      await never.cancel(handle.id, { reason: 'enough' });
      await assert.rejects(never.result(handle.id, { timeout: BOUND }), (error: { code?: string }) => error.code === 'RUN_CANCELLED');
      assert.equal(client.listening(), 0, 'a client never listens');
      assert.ok(client.notified.length >= 3, `the start, the event and the cancel were signalled (${client.notified.length})`);
    } finally {
      await work.stop();
      await never.stop();
    }
  });

  it('an engine started later with workers runs what it started before start()', async () => {
    const wf = defineWorkflow('sd-start-later', async (ctx) => ctx.step('one', () => 1));
    const engine = createEngine({ store: createMemoryStore(), workflows: [wf], recoveryIntervalMs: RECOVERY_MS, logger: quiet });
    const handle = await engine.startRun(wf, null);
    await engine.start();
    try {
      assert.equal(await engine.result(handle.id, { timeout: BOUND }), 1);
    } finally {
      await engine.stop();
    }
  });

  it('an event and a cancel sent by an engine without workers reach a waiting run at once', async () => {
    const wf = defineWorkflow('sd-event', async (ctx) => {
      const first = await ctx.waitForEvent('go');
      await ctx.waitForEvent('never');
      return first;
    });
    const p = await pair([wf]);
    try {
      const handle = await p.api.startRun(wf, null);
      const waitingOn = async (key: string) => {
        for (let i = 0; i < 1000; i++) {
          const steps = await p.memory.steps.load(handle.id);
          const run = await p.memory.runs.get(handle.id);
          if (run?.status === 'waiting' && steps.some((s) => s.key === key)) return;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        assert.fail(`the run never waited on ${key}`);
      };
      await waitingOn('event:go');
      await p.api.sendEvent(handle.id, 'go', 'yes');
      await waitingOn('event:never');
      await p.api.cancel(handle.id, { reason: 'enough' });
      await assert.rejects(p.api.result(handle.id, { timeout: BOUND }), (error: { code?: string }) => error.code === 'RUN_CANCELLED');
      assert.equal((await p.memory.steps.load(handle.id)).find((s) => s.key === 'event:go')?.output, 'yes');
    } finally {
      await p.stop();
    }
  });

  it('a cancel sent by an engine without workers aborts a body running on an engine with workers at once', async () => {
    await cancelRunningBody('sd-cancel-running', { workers: false });
  });

  it('a cancel sent by another engine with workers reaches the body at once too', async () => {
    await cancelRunningBody('sd-cancel-peer', {});
  });

  it('an engine with workers starts its own runs with no signal (the single-process path is unchanged)', async () => {
    const wf = defineWorkflow('sd-local', async (ctx) => ctx.step('one', () => 1));
    const p = await pair([wf]);
    try {
      const handle = await p.work.startRun(wf, null);
      assert.equal(await handle.result({ timeout: BOUND }), 1);
      assert.equal(p.worker.notified.length, 0);
    } finally {
      await p.stop();
    }
  });
});

describe('a local queue passed in is shared, not replaced by the store', () => {
  it('an engine without workers sends its runs to the queue it was given, which another engine of the process consumes', async () => {
    const wf = defineWorkflow('sd-shared-queue', async (ctx) => ctx.step('one', () => 'shared'));
    const store = countedSignals(createMemoryStore());
    const queue = createLocalQueue();
    const api = createEngine({ store: store.store, queue, workflows: [wf], recoveryIntervalMs: RECOVERY_MS, logger: quiet });
    const work = createEngine({ store: store.store, queue, workflows: [wf], recoveryIntervalMs: RECOVERY_MS, logger: quiet });
    await api.start({ workers: false });
    const handle = await api.startRun(wf, null);
    // Started after the run was sent: only the shared queue can bring it (no signal was sent).
    await work.start();
    try {
      assert.equal(await api.result(handle.id, { timeout: BOUND }), 'shared');
      assert.equal(store.notified.length, 0);
    } finally {
      await api.stop();
      await work.stop();
      await queue.close();
    }
  });
});

/** The store with its `runs.claim` calls counted (every engine given it shares the count). */
function countedClaims(store: WorkflowStore): { store: WorkflowStore; claims: () => number } {
  let claims = 0;
  const runs = new Proxy(store.runs, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property !== 'claim' || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        claims += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: Object.assign(Object.create(store) as WorkflowStore, { runs }), claims: () => claims };
}

describe('one listening worker claims each signalled run (decision 40)', () => {
  it('with four listening workers, each run started elsewhere is claimed about once, not four times', async () => {
    const wf = defineWorkflow('sd-herd', async (ctx, n: number) => ctx.step('double', () => n * 2));
    const memory = createMemoryStore();
    const counted = countedClaims(memory);
    const options = { store: counted.store, workflows: [wf], recoveryIntervalMs: RECOVERY_MS, logger: quiet };
    const workers = Array.from({ length: 4 }, () => createEngine(options));
    const api = createEngine(options);
    // Each worker answers every later one's join with `here` (3 + 2 + 1): once all six arrived,
    // every worker knows the others.
    const heres: string[] = [];
    const stopWatching = await memory.signals!.listen('runs', (m) => void (m?.includes('"here"') && heres.push(m)));
    for (const worker of workers) await worker.start();
    await api.start({ workers: false });
    for (let i = 0; i < 1000 && heres.length < 6; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    await stopWatching();
    assert.equal(heres.length, 6);
    try {
      const runs = 40;
      const handles = [];
      for (let i = 0; i < runs; i++) handles.push(await api.startRun(wf, i));
      for (const [i, handle] of handles.entries()) assert.equal(await api.result(handle.id, { timeout: BOUND }), i * 2);
      // One claim per run; every listener claiming would make 160.
      assert.ok(counted.claims() <= runs + 4, `${counted.claims()} claims for ${runs} runs over 4 listening workers`);
      // A worker that stops leaves: its share goes to the others at once, not after a recovery pass.
      await workers.pop()!.stop();
      const more = [];
      for (let i = 0; i < 12; i++) more.push(await api.startRun(wf, i));
      for (const [i, handle] of more.entries()) assert.equal(await api.result(handle.id, { timeout: BOUND }), i * 2);
    } finally {
      await api.stop();
      for (const worker of workers) await worker.stop();
    }
  });

  it('a worker that vanished without leaving is dropped once a recovery pass finds a run signalled to it still due', async () => {
    const wf = defineWorkflow('sd-ghost', async (ctx, n: number) => ctx.step('double', () => n * 2));
    const memory = createMemoryStore();
    // Short passes: the run signalled to the ghost is only found by one.
    const options = { store: memory, workflows: [wf], recoveryIntervalMs: 200, logger: quiet };
    const worker = createEngine(options);
    const api = createEngine(options);
    await worker.start();
    await api.start({ workers: false });
    // A listening worker that announced itself and then died (SIGKILL: no leave).
    await memory.signals!.notify('runs', JSON.stringify(['~worker', 'ghost', 'join', ['sd-ghost']]));
    try {
      const handles = [];
      for (let i = 0; i < 20; i++) handles.push(await api.startRun(wf, i));
      // About half hash to the ghost: they wait for a recovery pass, which also drops the ghost.
      for (const [i, handle] of handles.entries()) assert.equal(await api.result(handle.id, { timeout: BOUND }), i * 2);
      const later = [];
      for (let i = 0; i < 20; i++) later.push(await api.startRun(wf, i));
      for (const [i, handle] of later.entries()) assert.equal(await api.result(handle.id, { timeout: BOUND }), i * 2);
    } finally {
      await api.stop();
      await worker.stop();
    }
  });
});

describe('createMemoryStore().signals', () => {
  it('delivers to every listener of the topic, not to other topics, and not after unlisten', async () => {
    const store = createMemoryStore();
    const a: (string | undefined)[] = [];
    const b: (string | undefined)[] = [];
    const stopA = await store.signals!.listen('t', (m) => a.push(m));
    const stopB = await store.signals!.listen('other', (m) => b.push(m));
    await store.signals!.notify('t', 'one');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(a, ['one']);
    assert.deepEqual(b, []);
    await stopA();
    await store.signals!.notify('t', 'two');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(a, ['one']);
    await stopB();
  });
});
