import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Json, createMemoryStore, defineWorkflow } from '@cairn/core';
import { ManualClock } from '@cairn/core/testing';
import { codeChain, countingStore, createFixture, rejectsWithCode, turns, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

const echo = defineWorkflow('echo', async (ctx, input: unknown) => ctx.step('echo', () => input as Json));

describe('bad input is refused with a typed error and writes nothing', () => {
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const cases: Array<[string, () => [unknown, unknown, object?], string]> = [
    ['an unknown workflow (by name)', () => ['nope', {}], 'WORKFLOW_NOT_FOUND'],
    ['an unknown workflow (by definition)', () => [defineWorkflow('unregistered', async () => 1), {}], 'WORKFLOW_NOT_FOUND'],
    ['an unknown version', () => [echo, {}, { version: '9' }], 'VERSION_NOT_FOUND'],
    ['a function as input', () => [echo, () => 1], 'NOT_SERIALIZABLE'],
    ['a function inside the input', () => [echo, { cb: () => 1 }], 'NOT_SERIALIZABLE'],
    ['a BigInt input', () => [echo, { n: 10n }], 'NOT_SERIALIZABLE'],
    ['a cyclic input', () => [echo, cycle], 'NOT_SERIALIZABLE'],
    ['a Map input', () => [echo, new Map([[1, 2]])], 'NOT_SERIALIZABLE'],
    ['NaN in the input', () => [echo, { x: Number.NaN }], 'NOT_SERIALIZABLE'],
    ['an oversized input', () => [echo, { blob: 'x'.repeat(2048) }], 'PAYLOAD_TOO_LARGE'],
    ['an empty idempotency key', () => [echo, {}, { idempotencyKey: '' }], 'INVALID_INPUT'],
    ['an overlong idempotency key', () => [echo, {}, { idempotencyKey: 'k'.repeat(513) }], 'INVALID_INPUT'],
    ['a non-string idempotency key', () => [echo, {}, { idempotencyKey: 42 }], 'INVALID_INPUT'],
    ['an unknown start mode', () => [echo, {}, { mode: 'later' }], 'INVALID_INPUT'],
  ];
  for (const [label, make, code] of cases) {
    it(`${label} → ${code}`, async () => {
      const fx = await createFixture({ workflows: [echo], maxPayloadBytes: 1024 });
      try {
        fx.counter.reset();
        const [workflow, input, options] = make();
        await rejectsWithCode(fx.engine.startRun(workflow as never, input, options as never), code);
        await turns(5);
        assert.deepEqual(fx.counter.counts(), {}, 'no store call at all');
        assert.deepEqual((await fx.engine.listRuns()).runs, []);
      } finally {
        await fx.engine.stop();
      }
    });
  }

  it('the payload limit is the smaller of the engine’s and the store’s', async () => {
    const counter = countingStore(createMemoryStore({ maxPayloadBytes: 100 }));
    const fx = await createFixture({ workflows: [echo], counter });
    try {
      const err = await rejectsWithCode(fx.engine.startRun(echo, { blob: 'x'.repeat(200) }), 'PAYLOAD_TOO_LARGE');
      assert.equal((err.data as { maxBytes: number }).maxBytes, 100);
      assert.deepEqual((await fx.engine.listRuns()).runs, []);
      const h = await fx.engine.startRun(echo, { small: true });
      assert.deepEqual(await h.result(), { small: true });
    } finally {
      await fx.engine.stop();
    }
  });

  it('a non-JSON or oversized workflow output fails the run with that code', async () => {
    const fn = defineWorkflow('returns-fn', async () => (() => 1) as unknown as Json);
    const huge = defineWorkflow('returns-huge', async () => 'x'.repeat(5000));
    const fx = await createFixture({ workflows: [fn, huge], maxPayloadBytes: 1024 });
    try {
      const a = await fx.engine.startRun(fn, null);
      const b = await fx.engine.startRun(huge, null);
      await waitForStatus(fx.inner, a.id, 'failed');
      await waitForStatus(fx.inner, b.id, 'failed');
      assert.deepEqual(codeChain(await rejectsWithCode(a.result(), 'RUN_FAILED')), ['RUN_FAILED', 'NOT_SERIALIZABLE']);
      assert.deepEqual(codeChain(await rejectsWithCode(b.result(), 'RUN_FAILED')), ['RUN_FAILED', 'PAYLOAD_TOO_LARGE']);
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('idempotency keys', () => {
  it('a repeated key returns the existing run (created: false, same id) and starts nothing', async () => {
    let bodies = 0;
    const wf = defineWorkflow('once', async (ctx, input: { n: number }) => ctx.step('s', () => (bodies++, input.n)));
    const other = defineWorkflow('other', async () => 'other');
    const fx = await createFixture({ workflows: [wf, other] });
    try {
      const first = await fx.engine.startRun(wf, { n: 1 }, { idempotencyKey: 'order-1' });
      assert.equal(first.created, true);
      await waitForStatus(fx.inner, first.id, 'completed');
      const again = await fx.engine.startRun(wf, { n: 2 }, { idempotencyKey: 'order-1' });
      assert.deepEqual([again.id, again.created], [first.id, false]);
      assert.equal(await again.result(), 1, 'the existing run’s result, not the new input');
      // Concurrent starts with one key: exactly one is created.
      const racing = await Promise.all(Array.from({ length: 5 }, (_, i) => fx.engine.startRun(wf, { n: 10 + i }, { idempotencyKey: 'order-2' })));
      assert.equal(racing.filter((r) => r.created).length, 1);
      assert.equal(new Set(racing.map((r) => r.id)).size, 1);
      await waitForStatus(fx.inner, racing[0]!.id, 'completed');
      // The key is unique per workflow.
      const elsewhere = await fx.engine.startRun(other, null, { idempotencyKey: 'order-1' });
      assert.equal(elsewhere.created, true);
      assert.notEqual(elsewhere.id, first.id);
      await waitForStatus(fx.inner, elsewhere.id, 'completed');
      await turns(10);
      assert.equal(bodies, 2);
      assert.equal((await fx.engine.listRuns({ workflow: 'once' })).runs.length, 2);
    } finally {
      await fx.engine.stop();
    }
  });
});

describe('versions', () => {
  const v = (version: string, tag: string) =>
    defineWorkflow(
      'versioned',
      async (ctx) => {
        const a = await ctx.step('a', () => `${tag}-a`);
        await ctx.sleep('nap', 1000);
        const b = await ctx.step(tag === 'v1' ? 'b' : 'b2', () => `${tag}-b`);
        return [a, b];
      },
      { version },
    );

  it('new runs use the version listed last; startRun({ version }) picks another; both are registered', async () => {
    const fx = await createFixture({ workflows: [v('1', 'v1'), v('2', 'v2')] });
    try {
      const latest = await fx.engine.startRun('versioned', null);
      const pinned = await fx.engine.startRun('versioned', null, { version: '1' });
      assert.equal((await fx.engine.getRun(latest.id))!.version, '2');
      assert.equal((await fx.engine.getRun(pinned.id))!.version, '1');
      await waitForIdle(fx.inner, latest.id);
      await waitForIdle(fx.inner, pinned.id);
      await fx.clock.advance(1000);
      assert.deepEqual(await latest.result(), ['v2-a', 'v2-b']);
      assert.deepEqual(await pinned.result(), ['v1-a', 'v1-b']);
      assert.deepEqual(
        (await fx.inner.versions.list('versioned')).map((r) => [r.version, r.status]),
        [
          ['1', 'active'],
          ['2', 'active'],
        ],
      );
    } finally {
      await fx.engine.stop();
    }
    const reversed = await createFixture({ workflows: [v('2', 'v2'), v('1', 'v1')] });
    try {
      const h = await reversed.engine.startRun('versioned', null);
      assert.equal((await reversed.engine.getRun(h.id))!.version, '1', 'the last listed, not the highest');
    } finally {
      await reversed.engine.stop();
    }
  });

  it('a run started on v1 replays on v1 after v2 is registered (and waits for a worker that knows v1)', async () => {
    const clock = new ManualClock();
    const counter = countingStore();
    const old = await createFixture({ workflows: [v('1', 'v1')], clock, counter, workerId: 'old' });
    const h = await old.engine.startRun('versioned', null);
    await waitForIdle(counter.inner, h.id);
    await old.engine.stop();
    // A worker that only knows v2 must not run it (nor fail it).
    const v2only = await createFixture({ workflows: [v('2', 'v2')], clock, counter, workerId: 'v2-only', timings: { leaseMs: 5000 } });
    await clock.advance(1000);
    assert.equal(await v2only.engine.recover(), 1);
    const parked = await waitForIdle(counter.inner, h.id);
    assert.equal(parked.status, 'waiting');
    assert.equal(parked.wakeAt, clock.now() + 5000, 'stepped aside for one lease length');
    assert.ok(v2only.logs.some((l) => l.level === 'warn' && /version 1 is not registered/.test(l.message)));
    await v2only.engine.stop();
    // The new deploy registers both: the run finishes on v1.
    const both = await createFixture({ workflows: [v('1', 'v1'), v('2', 'v2')], clock, counter, workerId: 'both' });
    try {
      await clock.advance(5000);
      assert.equal(await both.engine.recover(), 1);
      await waitForStatus(counter.inner, h.id, 'completed');
      assert.deepEqual(await both.engine.result(h.id), ['v1-a', 'v1-b']);
      assert.equal((await both.engine.getRun(h.id))!.version, '1');
    } finally {
      await both.engine.stop();
    }
  });
});

describe('deleteRun', () => {
  const wf = defineWorkflow('deletable', async (ctx) => {
    await ctx.setState('progress', 1);
    await ctx.step('a', () => 'a');
    const ev = await ctx.waitForEvent('go');
    await ctx.setState('progress', 2);
    return ev;
  });

  it('refuses an active run with RUN_ACTIVE (deleting nothing); removes every artefact of a finished one', async () => {
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null, { idempotencyKey: 'k' });
      await waitForIdle(fx.inner, h.id);
      await rejectsWithCode(fx.engine.deleteRun(h.id), 'RUN_ACTIVE');
      assert.equal((await fx.engine.getRun(h.id))?.status, 'waiting');
      assert.equal((await fx.engine.steps(h.id)).length, 2);
      await fx.engine.sendEvent(h.id, 'go', 'went');
      await waitForStatus(fx.inner, h.id, 'completed');
      assert.deepEqual(await fx.engine.state(h.id), { progress: 2 });
      assert.ok((await fx.engine.history(h.id)).length > 0);

      assert.equal(await fx.engine.deleteRun(h.id), true);
      assert.equal(await fx.engine.getRun(h.id), undefined);
      assert.deepEqual(await fx.engine.steps(h.id), []);
      assert.deepEqual(await fx.engine.history(h.id), []);
      assert.deepEqual(await fx.engine.state(h.id), {});
      assert.equal(await fx.inner.events.get(h.id, 'go', 1), undefined);
      assert.deepEqual((await fx.engine.listRuns()).runs, []);
      await rejectsWithCode(fx.engine.result(h.id), 'RUN_NOT_FOUND');
      assert.equal(await fx.engine.deleteRun(h.id), false, 'already gone');
      // The idempotency key is free again.
      const again = await fx.engine.startRun(wf, null, { idempotencyKey: 'k' });
      assert.equal(again.created, true);
      assert.notEqual(again.id, h.id);
    } finally {
      await fx.engine.stop();
    }
  });

  it('force deletes an active run, and nothing resurrects it afterwards', async () => {
    const napper = defineWorkflow('napper', async (ctx) => {
      await ctx.step('a', () => 1);
      await ctx.sleep('nap', 1000);
      await ctx.step('b', () => 2);
    });
    const fx = await createFixture({ workflows: [napper] });
    try {
      const h = await fx.engine.startRun(napper, null);
      await waitForIdle(fx.inner, h.id);
      assert.equal(await fx.engine.deleteRun(h.id, { force: true }), true);
      await fx.clock.advance(1000); // the timer's job still fires
      await fx.engine.recover();
      await turns(20);
      assert.equal(await fx.engine.getRun(h.id), undefined);
      assert.deepEqual(await fx.engine.steps(h.id), []);
      assert.deepEqual((await fx.engine.listRuns()).runs, []);
    } finally {
      await fx.engine.stop();
    }
  });
});
