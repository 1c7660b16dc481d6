// Paths of `src/engine` that the coverage review (issue 34 part 6, docs/testing.md "Coverage")
// found run by no test: each case here makes one of them happen and checks what it does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { createFixture, rejectsWithCode, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

const quiet = { warn: () => {}, error: () => {} };

describe('engine paths found by the coverage review', () => {
  it('a concurrency key function that throws when the run executes (not at its start) fails the run with INVALID_INPUT, nothing of its body runs', async () => {
    let keyCalls = 0;
    let bodies = 0;
    const keyed = defineWorkflow(
      'key-throws-later',
      async (ctx) => {
        bodies += 1;
        return ctx.step('a', () => 1);
      },
      {
        concurrency: {
          limit: 1,
          key: () => {
            keyCalls += 1;
            // startRun checks the key (call 1); the claim computes it again and meets a changed mind.
            if (keyCalls > 1) throw new Error('tenant lookup failed');
            return 'tenant-1';
          },
        },
      },
    );
    // The plain memory store: the fixture's counting wrapper has no slots.
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [keyed], logger: quiet });
    await engine.start();
    try {
      const handle = await engine.startRun(keyed, null);
      const run = await waitForStatus(store, handle.id, 'failed');
      assert.equal(run.error?.code, 'INVALID_INPUT');
      assert.match(run.error?.message ?? '', /concurrency key threw for this input: tenant lookup failed/);
      assert.equal(bodies, 0, 'the body never ran');
      assert.deepEqual(await store.steps.load(handle.id), []);
    } finally {
      await engine.stop();
    }
  });

  it('the timeline shows a select as a wait with its winner (an event), its kind and its timeout', async () => {
    const picker = defineWorkflow('timeline-select', async (ctx) => ctx.select('first', { approved: { event: 'approval' }, timeout: { timer: '1h' } }));
    const fx = await createFixture({ workflows: [picker] });
    try {
      const t0 = fx.clock.now();
      const handle = await fx.engine.startRun(picker, null);
      await waitForIdle(fx.inner, handle.id);
      const waiting = await fx.engine.timeline(handle.id);
      assert.deepEqual(waiting.steps[0]?.wait, { kind: 'select', timeoutAt: t0 + 3_600_000 });
      await fx.engine.sendEvent(handle.id, 'approval', { by: 'Ada' });
      await waitForStatus(fx.inner, handle.id, 'completed');
      const done = await fx.engine.timeline(handle.id);
      assert.equal(done.steps[0]?.kind, 'select');
      // Decided: the timer is gone with the wait, the winner is the first 'approval' message.
      assert.deepEqual(done.steps[0]?.wait, { kind: 'select', winner: 'approved', winnerKind: 'event', event: 'approval', seq: 1 });
    } finally {
      await fx.engine.stop();
    }
  });

  it('ctx.emit on a store without streams fails the run with STREAM_UNSUPPORTED, and readStream refuses at once', async () => {
    const emitter = defineWorkflow('emit-no-streams', async (ctx) => {
      await ctx.emit('progress', 1);
      return 'unreached';
    });
    const store = createMemoryStore();
    const bare = Object.assign(Object.create(store) as WorkflowStore, { streams: undefined });
    const engine = createEngine({ store: bare, workflows: [emitter], logger: quiet });
    await engine.start();
    try {
      const handle = await engine.startRun(emitter, null);
      const run = await waitForStatus(store, handle.id, 'failed');
      assert.equal(run.error?.code, 'STREAM_UNSUPPORTED');
      await rejectsWithCode(() => engine.readStream(handle.id, 'progress'), 'STREAM_UNSUPPORTED');
    } finally {
      await engine.stop();
    }
  });

  it('readStream refuses a signal that is not an AbortSignal, before reading anything', async () => {
    const fx = await createFixture({ workflows: [] });
    try {
      fx.counter.reset();
      await rejectsWithCode(() => fx.engine.readStream('01a251fe-c63a-7b14-a867-6db36425f73b', 'progress', { signal: {} as AbortSignal }), 'INVALID_INPUT');
      assert.deepEqual(fx.counter.counts(), {});
    } finally {
      await fx.engine.stop();
    }
  });

  it('defineWorkflow refuses a description that is not a string, and a step a backoff type it does not know', async () => {
    await rejectsWithCode(() => defineWorkflow('described', async () => null, { description: 42 as unknown as string }), 'INVALID_INPUT');
    const odd = defineWorkflow('odd-backoff', async (ctx) => ctx.step('a', () => 1, { retries: 1, backoff: { type: 'linear', delay: 10 } as never }));
    const fx = await createFixture({ workflows: [odd] });
    try {
      const handle = await fx.engine.startRun(odd, null);
      const run = await waitForStatus(fx.inner, handle.id, 'failed');
      assert.equal(run.error?.code, 'INVALID_INPUT');
      assert.match(run.error?.message ?? '', /backoff.type must be 'fixed' or 'exponential'/);
    } finally {
      await fx.engine.stop();
    }
  });
});
