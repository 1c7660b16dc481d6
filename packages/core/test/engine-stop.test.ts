import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, defineWorkflow } from '@cairn/core';
import { ManualClock } from '@cairn/core/testing';
import { countingStore, createFixture, gate, turns, until, waitForStatus } from './helpers/engine-fixture.js';

/** A one-step workflow whose first attempt hangs (ignoring its signal) unless `behave` is set. */
function stubbornStep(name: string) {
  const seen: { signal?: AbortSignal; attempts: number; behave: boolean } = { attempts: 0, behave: false };
  const started = gate();
  const wf = defineWorkflow(name, async (ctx) =>
    ctx.step('a', async (s) => {
      seen.attempts += 1;
      if (seen.behave) return 'second worker';
      seen.signal = s.signal;
      started.open();
      return new Promise(() => {}); // ignores its signal and never settles
    }),
  );
  return { wf, seen, started };
}

async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await turns(20);
  return done;
}

describe('engine.stop', () => {
  it('waits out the grace period, then abandons a hung execution and hands its run back for another worker', async () => {
    const clock = new ManualClock();
    const counter = countingStore();
    const { wf, seen, started } = stubbornStep('stop-hung');
    const a = await createFixture({ workflows: [wf], clock, counter, workerId: 'A' });
    const h = await a.engine.startRun(wf, null);
    await started.promise;
    const stopping = a.engine.stop({ graceMs: 5000 });
    assert.equal(await settled(stopping), false, 'stop() waits while the grace period lasts');
    await clock.advance(4999);
    assert.equal(await settled(stopping), false);
    assert.equal(seen.signal?.aborted, false, 'the body is not disturbed during the grace period');
    await clock.advance(1);
    await stopping;
    assert.equal(seen.signal?.aborted, true, 'the body is told to stop');
    const run = await counter.inner.runs.get(h.id);
    assert.equal(run?.status, 'waiting', 'the run is handed back');
    assert.equal(run?.lease, undefined, 'its lease is released');
    assert.ok((run?.wakeAt ?? Infinity) <= clock.now(), 'and it is due at once');
    // Another worker resumes it at once, without waiting for the lease to expire.
    seen.behave = true;
    const b = await createFixture({ workflows: [wf], clock, counter, workerId: 'B' });
    try {
      assert.equal(await b.engine.recover(), 1);
      await waitForStatus(counter.inner, h.id, 'completed');
      assert.equal((await counter.inner.runs.get(h.id))?.output, 'second worker');
      assert.equal(seen.attempts, 2);
    } finally {
      await b.engine.stop();
    }
  });

  it('an execution that finishes within the grace period is waited for and recorded normally', async () => {
    const clock = new ManualClock();
    const counter = countingStore();
    const release = gate();
    const started = gate();
    const wf = defineWorkflow('stop-graceful', async (ctx) =>
      ctx.step('a', async () => {
        started.open();
        await release.promise;
        return 'finished';
      }),
    );
    const fx = await createFixture({ workflows: [wf], clock, counter });
    const h = await fx.engine.startRun(wf, null);
    await started.promise;
    const stopping = fx.engine.stop({ graceMs: 5000 });
    await clock.advance(2000);
    assert.equal(await settled(stopping), false);
    release.open();
    await stopping;
    const run = await counter.inner.runs.get(h.id);
    assert.equal(run?.status, 'completed');
    assert.equal(run?.output, 'finished');
  });

  it('waits for inline starts too, and abandons them after the grace period', async () => {
    const clock = new ManualClock();
    const counter = countingStore();
    const { wf, seen, started } = stubbornStep('stop-inline');
    const fx = await createFixture({ workflows: [wf], clock, counter, start: false });
    const h = await fx.engine.startRun(wf, null, { mode: 'inline' });
    await started.promise;
    const stopping = fx.engine.stop({ graceMs: 100 });
    assert.equal(await settled(stopping), false, 'the inline execution is in flight');
    await clock.advance(100);
    await stopping;
    assert.equal(seen.signal?.aborted, true);
    await until(async () => (await counter.inner.runs.get(h.id))?.status === 'waiting', 'the run handed back');
  });

  it('refuses a negative or non-numeric grace period', async () => {
    const fx = await createFixture({ workflows: [defineWorkflow('stop-bad', async () => 1)] });
    const invalid = (e: unknown) => CairnError.is(e, 'INVALID_INPUT');
    await assert.rejects(fx.engine.stop({ graceMs: -1 }), invalid);
    await assert.rejects(fx.engine.stop({ graceMs: Number.NaN }), invalid);
    await fx.engine.stop();
  });
});
