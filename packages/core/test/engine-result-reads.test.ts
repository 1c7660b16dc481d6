// `result()` of a run that this process is executing waits for the in-process notice instead of
// polling the store: it makes no store read while the execution is here, and goes back to
// polling as soon as it is not (suspended, crashed, or taken by another worker).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineWorkflow } from '@cairn/core';
import { countingStore, createFixture, turns, until, waitForStatus } from './helpers/engine-fixture.js';

/** A promise released from outside: the step body blocks on it while the test moves the clock. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('result() reads', () => {
  it('makes no store read while the run executes in this process (inline start)', async () => {
    const g = gate();
    const wf = defineWorkflow('result-reads-inline', async (ctx) => {
      const a = await ctx.step('a', () => 1);
      await ctx.step('slow', () => g.promise);
      return a + 1;
    });
    const fx = await createFixture({ workflows: [wf], pollIntervalMs: 50 });
    try {
      const handle = await fx.engine.startRun(wf, null, { mode: 'inline' });
      fx.counter.reset();
      const result = handle.result();
      // Time passes while the body runs: a poller would read once per poll interval.
      for (let i = 0; i < 20; i++) {
        await turns(2);
        await fx.clock.advance(25);
      }
      g.open();
      assert.equal(await result, 2);
      assert.equal(fx.counter.count('runs.get'), 0, `store reads by result(): ${JSON.stringify(fx.counter.counts())}`);
    } finally {
      await fx.engine.stop();
    }
  });

  it('makes no store read while the run executes here from the local queue', async () => {
    const g = gate();
    let started = false;
    const wf = defineWorkflow('result-reads-queued', async (ctx) => {
      await ctx.step('slow', () => ((started = true), g.promise));
      return 'done';
    });
    const fx = await createFixture({ workflows: [wf], pollIntervalMs: 50 });
    try {
      const handle = await fx.engine.startRun(wf, null, { mode: 'queued' });
      // Wait until the local worker has claimed it: from then on the execution is in this process.
      await waitForStatus(fx.inner, handle.id, 'running');
      // The body runs before anything records the step (one write, once finished).
      await until(async () => started, 'the slow step started');
      fx.counter.reset();
      const result = fx.engine.result(handle.id);
      for (let i = 0; i < 20; i++) {
        await turns(2);
        await fx.clock.advance(25);
      }
      g.open();
      assert.equal(await result, 'done');
      assert.equal(fx.counter.count('runs.get'), 0, `store reads by result(): ${JSON.stringify(fx.counter.counts())}`);
    } finally {
      await fx.engine.stop();
    }
  });

  it('polls again once the execution leaves this process (a durable sleep), and still returns the output', async () => {
    const wf = defineWorkflow('result-reads-sleep', async (ctx) => {
      await ctx.sleep('nap', 1000);
      return 'woke';
    });
    const fx = await createFixture({ workflows: [wf], pollIntervalMs: 50 });
    try {
      const handle = await fx.engine.startRun(wf, null, { mode: 'inline' });
      const result = handle.result();
      await waitForStatus(fx.inner, handle.id, 'waiting');
      fx.counter.reset();
      // The run is suspended: nobody here executes it, so result() must look at the store.
      for (let i = 0; i < 4; i++) {
        await turns(2);
        await fx.clock.advance(50);
      }
      assert.ok(fx.counter.count('runs.get') >= 1, 'result() polls a run that no execution here holds');
      await fx.clock.advance(1000);
      await fx.engine.recover();
      assert.equal(await result, 'woke');
    } finally {
      await fx.engine.stop();
    }
  });

  it('a waiter on another engine (no local execution) still gets the result by polling', async () => {
    const g = gate();
    const wf = defineWorkflow('result-reads-peer', async (ctx) => {
      await ctx.step('slow', () => g.promise);
      return 7;
    });
    const counter = countingStore();
    const worker = await createFixture({ workflows: [wf], counter, pollIntervalMs: 50 });
    const client = await createFixture({ workflows: [wf], counter, clock: worker.clock, start: false, pollIntervalMs: 50 });
    try {
      const handle = await worker.engine.startRun(wf, null, { mode: 'inline' });
      const result = client.engine.result(handle.id);
      await turns(5);
      g.open();
      await waitForStatus(worker.inner, handle.id, 'completed');
      for (let i = 0; i < 10; i++) {
        await turns(2);
        await worker.clock.advance(50);
      }
      assert.equal(await result, 7);
      assert.ok(counter.count('runs.get') >= 1);
    } finally {
      await client.engine.stop();
      await worker.engine.stop();
    }
  });
});
