import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';

const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('trace context of a run', () => {
  const child = defineWorkflow('tc-child', async () => 1);
  const wf = defineWorkflow('tc-parent', async (ctx) => ctx.child(child, null));

  it('startRun stores the given carrier (or the engine hook’s) with the run, and the run’s children inherit it', async () => {
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [wf, child], recoveryIntervalMs: 60_000, traceContext: () => ({ traceparent, tracestate: 'k=v' }) });
    await engine.start();
    try {
      const own = await engine.startRun(wf, null, { traceContext: { traceparent } });
      const hooked = await engine.startRun(wf, null);
      await Promise.all([own.result({ timeout: '10s' }), hooked.result({ timeout: '10s' })]);
      assert.deepEqual((await engine.getRun(own.id))?.traceContext, { traceparent });
      assert.deepEqual((await engine.getRun(hooked.id))?.traceContext, { traceparent, tracestate: 'k=v' });
      const { runs } = await engine.listRuns({ workflow: 'tc-child' });
      assert.equal(runs.length, 2);
      for (const run of runs) assert.ok(run.traceContext?.['traceparent'] === traceparent, 'a child continues its parent’s trace');
    } finally {
      await engine.stop();
    }
  });

  it('a malformed carrier is refused with INVALID_INPUT and nothing is stored', async () => {
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [wf, child], recoveryIntervalMs: 60_000 });
    await engine.start({ workers: false });
    for (const bad of [
      '00-abc',
      { traceparent: 1 },
      [traceparent],
      Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v'])),
      { traceparent: 'x'.repeat(1025) },
    ]) {
      await assert.rejects(engine.startRun(wf, null, { traceContext: bad as never }), (error: unknown) => CairnError.is(error, 'INVALID_INPUT'));
    }
    assert.equal((await engine.listRuns()).runs.length, 0);
    await engine.stop();
  });
});
