import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, createMemoryStore, defineWorkflow, fromStringLogger } from '@cairn/core';

test('smoke: steps, retries, sleep, event, child, state', async () => {
  let fails = 0;
  const child = defineWorkflow('child', async (ctx, input: { n: number }) => {
    const v = await ctx.step('double', () => input.n * 2);
    return v;
  });
  const wf = defineWorkflow('order', async (ctx, input: { id: string }) => {
    const a = await ctx.step('a', () => 1);
    const b = await ctx.step(
      'flaky',
      () => {
        if (fails++ < 2) throw new Error('boom');
        return 2;
      },
      { retries: 3, backoff: { type: 'fixed', delay: 5 } },
    );
    await ctx.sleep('nap', 20);
    const ev = await ctx.waitForEvent<{ ok: boolean }>('approve', { timeout: '5s' });
    const c = await ctx.child(child, { n: 21 });
    await ctx.setState('progress', 'done');
    const [x, y] = await Promise.all([ctx.step('p1', () => 'x'), ctx.step('p2', () => 'y', { queued: true })]);
    const falsy = await ctx.step('zero', () => 0);
    return { a, b, ev, c, x, y, falsy, id: input.id };
  });
  const store = createMemoryStore();
  const engine = createEngine({ store, workflows: [wf, child], logger: fromStringLogger(console) });
  await engine.start();
  const h = await engine.startRun(wf, { id: 'o1' });
  setTimeout(() => void engine.sendEvent(h.id, 'approve', { ok: true }), 50);
  const out = await h.result({ timeout: '10s' });
  assert.deepEqual(out, { a: 1, b: 2, ev: { ok: true }, c: 42, x: 'x', y: 'y', falsy: 0, id: 'o1' });
  const hist = await engine.history(h.id);
  assert.equal(hist.filter((e) => e.stepKey === 'flaky').length, 3);
  assert.deepEqual(await engine.state(h.id), { progress: 'done' });
  await engine.stop();
});
