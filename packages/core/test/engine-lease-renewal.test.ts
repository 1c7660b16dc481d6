import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, defineWorkflow } from '@cairn/core';
import { ManualClock } from '@cairn/core/testing';
import { countingStore, createFixture, gate, turns, until, waitForStatus } from './helpers/engine-fixture.js';

const storeError = () => new CairnError('STORE_ERROR', 'runs.renew failed: connection reset');

/** A workflow whose one step waits for `release`, reporting its signal when it starts. */
function heldStep(name: string) {
  const bodies: string[] = [];
  const started = gate<AbortSignal>();
  const release = gate();
  const wf = defineWorkflow(name, async (ctx) => {
    return ctx.step('a', async (s) => {
      bodies.push('a');
      started.open(s.signal);
      await release.promise;
      return 'done';
    });
  });
  return { wf, bodies, started, release };
}

describe('lease renewal', () => {
  it('a renewal that fails with a store error is retried while the lease holds: the execution goes on and finishes', async () => {
    const clock = new ManualClock();
    const counter = countingStore();
    const { wf, bodies, started, release } = heldStep('renew-hiccup');
    let failures = 1;
    counter.intercept('runs.renew', (original, ...args) => (failures-- > 0 ? Promise.reject(storeError()) : original(...args)));
    const fx = await createFixture({ workflows: [wf], clock, counter, timings: { leaseMs: 3000 } });
    try {
      const h = await fx.engine.startRun(wf, null);
      const signal = await started.promise;
      await clock.advance(1000); // a third of the lease: the renewal fails
      await until(() => counter.calls.some((c) => c.method === 'runs.renew' && c.outcome?.ok === false), 'the failed renewal');
      await turns(10);
      assert.equal(signal.aborted, false, 'one failed renewal does not abandon the execution');
      await clock.advance(500); // a quarter of the 2 s left: the retry succeeds
      await until(() => counter.calls.some((c) => c.method === 'runs.renew' && c.outcome?.ok === true), 'the retried renewal');
      release.open();
      await waitForStatus(counter.inner, h.id, 'completed');
      assert.deepEqual(bodies, ['a'], 'the step ran once');
      assert.equal((await counter.inner.runs.get(h.id))?.output, 'done');
    } finally {
      await fx.engine.stop();
    }
  });

  it('renewals that keep failing abandon the execution by the time the lease it held runs out, not before retrying', async () => {
    const clock = new ManualClock();
    const counter = countingStore();
    const { wf, started, release } = heldStep('renew-down');
    counter.intercept('runs.renew', () => Promise.reject(storeError()));
    const fx = await createFixture({ workflows: [wf], clock, counter, timings: { leaseMs: 3000 } });
    try {
      await fx.engine.startRun(wf, null);
      const signal = await started.promise;
      const claimedAt = clock.now();
      while (!signal.aborted && clock.now() - claimedAt < 3000) {
        await clock.advance(10);
        await turns(40);
      }
      assert.equal(signal.aborted, true, 'abandoned');
      // Another worker may claim the run once the lease runs out: by then this one has stopped.
      assert.ok(clock.now() - claimedAt <= 3000, `abandoned ${clock.now() - claimedAt} ms after the claim (lease 3000 ms)`);
      assert.ok(clock.now() - claimedAt > 2000, `abandoned ${clock.now() - claimedAt} ms after the claim: too early, the lease still held`);
      assert.ok(counter.calls.filter((c) => c.method === 'runs.renew').length >= 3, 'it retried before giving up');
    } finally {
      release.open();
      await fx.engine.stop();
    }
  });

  it('a renewal refused with LEASE_LOST abandons the execution at once, without retrying', async () => {
    const clock = new ManualClock();
    const counter = countingStore();
    const { wf, started, release } = heldStep('renew-lost');
    counter.intercept('runs.renew', () => Promise.reject(new CairnError('LEASE_LOST', 'taken over')));
    const fx = await createFixture({ workflows: [wf], clock, counter, timings: { leaseMs: 3000 } });
    try {
      await fx.engine.startRun(wf, null);
      const signal = await started.promise;
      await clock.advance(1000);
      await until(() => signal.aborted, 'the abandonment');
      await clock.advance(1500);
      await turns(10);
      assert.equal(counter.calls.filter((c) => c.method === 'runs.renew').length, 1);
    } finally {
      release.open();
      await fx.engine.stop();
    }
  });
});
