// Children and successors of a run follow the versions operators retire, as startRun does, but are
// never refused for it (issue 27, part 2): a retire must not fail a run that is already in flight.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineWorkflow } from '@cairn/core';
import { createFixture, waitForStatus } from './helpers/engine-fixture.js';

const shipV1 = defineWorkflow('ship', async (ctx) => ctx.step('label', () => 'v1'), { version: 'v1' });
const shipV2 = defineWorkflow('ship', async (ctx) => ctx.step('label', () => 'v2'), { version: 'v2' });
const order = defineWorkflow('order', async (ctx) => ctx.child(shipV2, null));

describe('children and retired versions', () => {
  it('a child starts on the newest version that is not retired', async () => {
    const fx = await createFixture({ workflows: [shipV1, shipV2, order] });
    try {
      await fx.engine.versions.setStatus('ship', 'v2', 'retired');
      const h = await fx.engine.startRun(order, null);
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.equal(run.output, 'v1');
    } finally {
      await fx.engine.stop();
    }
  });

  it('with every version of the child retired, the child still starts (on the one listed last): a retire never fails a run in flight', async () => {
    const fx = await createFixture({ workflows: [shipV1, shipV2, order] });
    try {
      await fx.engine.versions.setStatus('ship', 'v1', 'retired');
      await fx.engine.versions.setStatus('ship', 'v2', 'retired');
      const h = await fx.engine.startRun(order, null);
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.equal(run.output, 'v2');
    } finally {
      await fx.engine.stop();
    }
  });
});
