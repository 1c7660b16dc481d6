import assert from 'node:assert/strict';
import { CairnError, defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

/** A queued body that waits until its signal aborts, and records why. */
function abortableBody(seen: { aborted: boolean; reason?: unknown }) {
  return (step: { signal: AbortSignal }) =>
    new Promise<never>((_resolve, reject) => {
      const onAbort = () => {
        seen.aborted = true;
        seen.reason = step.signal.reason;
        reject(step.signal.reason);
      };
      if (step.signal.aborted) onAbort();
      else step.signal.addEventListener('abort', onAbort, { once: true });
    });
}

/**
 * Engine scenarios: cancellation reaches bodies running on another engine (another process), and
 * carries its reason. Two engines share the store; each has its own queue, so a body started by
 * one engine runs there, and a cancel sent through the other reaches it only through the store.
 */
export const cancelReachGroup: CaseGroup = caseGroup('engine.cancel-reach', 'engine: cancellation reaches every running body', [
  conformanceCase('cancel aborts a queued body running on another engine, with the reason', async (env) => {
    const seen: { aborted: boolean; reason?: unknown } = { aborted: false };
    let after = 0;
    const wf = defineWorkflow('cancel-queued-elsewhere', async (ctx) => {
      await ctx.step('slow', abortableBody(seen), { queued: true });
      await ctx.step('after', () => (after += 1));
      return 'done';
    });
    const w = await engineWorld(env, [wf]);
    const other = await w.startEngine([wf]);
    const handle = await other.startRun(wf, null);
    await w.runUntil('the queued body runs on the other engine', async () =>
      (await w.raw.steps.load(handle.id)).some((s) => s.key === 'slow' && s.status === 'running'),
    );
    const cancelledAt = w.clock.now();
    await w.engine.cancel(handle.id, { reason: 'customer asked' });
    const run = await w.runToEnd(handle.id);
    await w.runUntil('the body on the other engine sees its signal abort', async () => seen.aborted);
    assert.ok(w.clock.now() - cancelledAt <= 30_000 / 3 + 1, `aborted within a third of the lease (took ${w.clock.now() - cancelledAt} ms of clock time)`);
    assert.equal(run.status, 'cancelled');
    assert.equal(run.cancelReason, 'customer asked');
    assert.equal(run.error?.code, 'CANCELLED');
    assert.match(run.error?.message ?? '', /customer asked/);
    assert.ok(CairnError.is(seen.reason, 'CANCELLED'), `the body's signal.reason is CANCELLED, got ${String(seen.reason)}`);
    assert.match((seen.reason as Error).message, /customer asked/);
    assert.deepEqual(((seen.reason as CairnError).data as { reason?: string }).reason, 'customer asked');
    assert.equal(after, 0);
    const failed = await rejectsWithCode(handle.result(), 'RUN_CANCELLED');
    assert.match(String((failed.cause as Error | undefined)?.message), /customer asked/);
  }),

  conformanceCase('cancel aborts an inline body running on another engine within a third of the lease', async (env) => {
    const seen: { aborted: boolean; reason?: unknown } = { aborted: false };
    const wf = defineWorkflow('cancel-inline-elsewhere', async (ctx) => {
      await ctx.step('slow', abortableBody(seen));
      return 'done';
    });
    const w = await engineWorld(env, [wf]);
    const other = await w.startEngine([wf]);
    const handle = await other.startRun(wf, null);
    await w.runUntil('the inline body runs on the other engine', async () =>
      (await w.raw.steps.load(handle.id)).some((s) => s.key === 'slow' && s.status === 'running'),
    );
    const cancelledAt = w.clock.now();
    await w.engine.cancel(handle.id, { reason: 'shutting down the tenant' });
    await w.runUntil('the body sees its signal abort', async () => seen.aborted);
    assert.ok(w.clock.now() - cancelledAt <= 30_000 / 3 + 1, `aborted within a third of the lease (took ${w.clock.now() - cancelledAt} ms)`);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'cancelled');
    assert.equal(run.cancelReason, 'shutting down the tenant');
    assert.ok(CairnError.is(seen.reason, 'CANCELLED'));
    assert.match((seen.reason as Error).message, /shutting down the tenant/);
  }),

  conformanceCase('the first cancel reason is kept; cancel without a reason records none', async (env) => {
    const wf = defineWorkflow('cancel-reasons', async (ctx) => {
      await ctx.sleep('nap', '1h');
    });
    const w = await engineWorld(env, [wf]);
    const a = await w.engine.startRun(wf, null);
    const b = await w.engine.startRun(wf, null);
    await w.runUntil('both sleep', async () => (await w.raw.runs.get(a.id))?.status === 'waiting' && (await w.raw.runs.get(b.id))?.status === 'waiting');
    await w.engine.cancel(a.id, { reason: 'first' });
    await w.engine.cancel(a.id, { reason: 'second' });
    await w.engine.cancel(b.id);
    const runA = await w.runToEnd(a.id);
    const runB = await w.runToEnd(b.id);
    assert.equal(runA.cancelReason, 'first');
    assert.match(runA.error?.message ?? '', /first/);
    assert.equal(runB.status, 'cancelled');
    assert.equal(runB.cancelReason, undefined);
    await rejectsWithCode(w.engine.cancel(a.id, { reason: 42 as unknown as string }), 'INVALID_INPUT');
    await rejectsWithCode(w.engine.cancel(a.id, { why: 'x' } as never), 'INVALID_INPUT');
  }),
]);
