// A state read or write takes a delivery turn of its own and records no step. Code that no longer
// makes such a call, where the history's turns show one was made, must diverge, not wait for a
// turn that never comes (found by the check-prediction soak, seed 546 of 1,500 on memory).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkWorkflowCode, defineWorkflow, type WorkflowContext } from '@cairn/core';
import { createFixture, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

const slow = async (): Promise<string> => {
  for (let i = 0; i < 8; i++) await new Promise((resolve) => setImmediate(resolve));
  return 'b';
};

function build(state: 'set' | 'read' | 'none') {
  return defineWorkflow('state-turns', async (ctx: WorkflowContext) => {
    await Promise.all([
      (async () => {
        await ctx.step('a', () => 'a');
        if (state === 'set') await ctx.setState('k', 1);
        if (state === 'read') await ctx.state('k');
      })(),
      ctx.step('b', slow),
    ]);
    await ctx.sleep('nap', 60_000);
    return 'done';
  });
}

describe('state calls and delivery turns', () => {
  for (const original of ['set', 'read'] as const) {
    it(`code that no longer makes a ${original === 'set' ? 'setState' : 'state read'} the history's turns show diverges (check and resume agree), never hangs`, async () => {
      let fx = await createFixture({ workflows: [build(original)] });
      try {
        const h = await fx.engine.startRun(build(original), null);
        await waitForIdle(fx.inner, h.id);
        const turns = (await fx.inner.steps.load(h.id)).map((s) => [s.key, s.turn]);
        assert.deepEqual(turns, [
          ['a', 1],
          ['b', 3],
          ['nap', undefined],
        ]);
        const report = await checkWorkflowCode({ store: fx.store, workflows: [build('none')] });
        assert.equal(report.runs[0]?.verdict, 'diverges', JSON.stringify(report.runs[0]));
        assert.equal(report.runs[0]?.divergence?.reason, 'missing-call');
        assert.equal(report.runs[0]?.divergence?.turn, 1);
        await fx.engine.stop();
        fx = await createFixture({ workflows: [build('none')], counter: fx.counter, clock: fx.clock });
        await fx.clock.advance(60_000);
        await fx.engine.recover();
        await fx.engine.recover();
        const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
        assert.equal(run.status, 'failed');
        assert.equal(run.error?.code, 'NON_DETERMINISM');
        assert.match(run.error?.message ?? '', /turn 2/);
      } finally {
        await fx.engine.stop();
      }
    });
  }

  it('the same code replays the turn its state call took, and completes', async () => {
    let fx = await createFixture({ workflows: [build('set')] });
    try {
      const h = await fx.engine.startRun(build('set'), null);
      await waitForIdle(fx.inner, h.id);
      assert.equal((await checkWorkflowCode({ store: fx.store, workflows: [build('set')] })).runs[0]?.verdict, 'compatible');
      await fx.engine.stop();
      fx = await createFixture({ workflows: [build('set')], counter: fx.counter, clock: fx.clock });
      await fx.clock.advance(60_000);
      await fx.engine.recover();
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
    } finally {
      await fx.engine.stop();
    }
  });
});
