// A child's input (ctx.child, ctx.startChild, a select's child, ctx.continueAsNew) goes through the
// input schema of the version it starts on, as startRun's does (issue 28, part 3): a refused input
// is INVALID_INPUT at the call, nothing created; an accepted one is stored as the schema gives it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineWorkflow } from '@cairn/core';
import { z } from 'zod';
import { createFixture, waitForStatus } from './helpers/engine-fixture.js';

const ship = defineWorkflow('ship', async (ctx, input: { sku: string }) => ctx.step('label', () => `label-${input.sku}`), {
  input: z.object({ sku: z.string().trim().toUpperCase() }),
});

describe('child input and the child workflow input schema', () => {
  it('a child input the schema refuses is INVALID_INPUT at the call, and no child is created; an accepted one is stored transformed', async () => {
    const order = defineWorkflow('order', async (ctx) => {
      let refused = '';
      try {
        await ctx.child(ship, { sku: 42 } as unknown as { sku: string }, { name: 'bad' });
      } catch (error) {
        refused = (error as { code?: string }).code ?? String(error);
      }
      const label = await ctx.child(ship, { sku: '  ab-1 ' });
      return { refused, label };
    });
    const fx = await createFixture({ workflows: [ship, order] });
    try {
      const h = await fx.engine.startRun(order, null);
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.deepEqual(run.output, { refused: 'INVALID_INPUT', label: 'label-AB-1' });
      const children = (await fx.inner.runs.list({ workflow: 'ship' })).runs;
      assert.equal(children.length, 1, 'the refused child was never created');
      assert.deepEqual((await fx.inner.runs.get(children[0]?.id as string))?.input, { sku: 'AB-1' });
      assert.equal(
        (await fx.inner.steps.load(h.id)).some((s) => s.key === 'bad'),
        false,
        'nothing recorded for the refused call',
      );
    } finally {
      await fx.engine.stop();
    }
  });

  it('continueAsNew with an input the schema refuses fails the run with INVALID_INPUT and starts no successor', async () => {
    const loop = defineWorkflow(
      'loop',
      async (ctx, input: { n: number }) => {
        if (input.n > 0) return ctx.continueAsNew({ n: -1 } as { n: number });
        return input.n;
      },
      { input: z.object({ n: z.number().int().min(0) }) },
    );
    const fx = await createFixture({ workflows: [loop] });
    try {
      const h = await fx.engine.startRun(loop, { n: 1 });
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      assert.equal(run.status, 'failed');
      assert.equal(run.error?.code, 'INVALID_INPUT');
      assert.equal((await fx.inner.runs.list({ workflow: 'loop' })).runs.length, 1);
    } finally {
      await fx.engine.stop();
    }
  });
});
