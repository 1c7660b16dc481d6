import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { engineWorld } from '../engine/engine-world.js';
import { newStep, runningRun } from '../fixtures/run-fixtures.js';

async function artefacts(env: CaseEnv, runId: string): Promise<string[]> {
  const inspect = env.harness.artefactsOf;
  assert.ok(inspect, 'artefactsOf is required by this case');
  return inspect(env.store, env.namespace, runId);
}

/** Adversarial: deleting a run leaves nothing of it in the backend. */
export const deleteArtefactsGroup: CaseGroup = caseGroup(
  'adversarial.delete-artefacts',
  'adversarial: deleteRun leaves no artefact',
  [
    conformanceCase('deleteRun of a run with retried steps, a queued step, state and events leaves nothing behind', async (env) => {
      // Counted per run: with one counter for both runs, only the run whose body ran first failed
      // once, and the two start together — the run deleted had its retried attempt only by luck.
      const calls = new Map<string, number>();
      const wf = defineWorkflow('to-delete', async (ctx) => {
        await ctx.step(
          'flaky',
          (step) => {
            calls.set(step.runId, (calls.get(step.runId) ?? 0) + 1);
            if (calls.get(step.runId) === 1) throw new Error('once');
            return 'ok';
          },
          { retries: 1, backoff: { type: 'fixed', delay: 10 } },
        );
        await ctx.step('queued', () => 'q', { queued: true });
        await ctx.setState('progress.$pct', 100);
        await ctx.waitForEvent('approved');
        await ctx.now();
        return 'done';
      });
      const w = await engineWorld(env, [wf]);
      const doomed = await w.engine.startRun(wf, null, { idempotencyKey: 'delete-me' });
      const kept = await w.engine.startRun(wf, null, { idempotencyKey: 'keep-me' });
      await w.runUntil('both runs wait for their event', async () =>
        (await Promise.all([doomed.id, kept.id].map((id) => w.raw.runs.get(id)))).every((r) => r?.status === 'waiting'),
      );
      await w.engine.sendEvent(doomed.id, 'approved', { by: 'ops' });
      await w.engine.sendEvent(kept.id, 'approved', { by: 'ops' });
      await w.runToEnd(doomed.id);
      await w.runToEnd(kept.id);
      assert.equal((await w.raw.history.list(doomed.id)).filter((a) => a.stepKey === 'flaky').length, 2, 'the run to delete has a retried step');

      const before = await artefacts(env, doomed.id);
      assert.ok(before.length > 0, 'artefactsOf must see what a finished run left before it is deleted');
      const keptBefore = await artefacts(env, kept.id);
      assert.equal(await w.engine.deleteRun(doomed.id), true);
      assert.deepEqual(await artefacts(env, doomed.id), [], 'every row, key or document of the run must be gone');
      assert.deepEqual(await artefacts(env, kept.id), keptBefore, 'another run keeps all of its artefacts');
      const again = await w.engine.startRun(wf, null, { idempotencyKey: 'delete-me' });
      assert.equal(again.created, true, 'the idempotency key is free again');
      // Its first attempt fails too and waits out its backoff on the world's clock: the case leaves
      // it suspended at its event, as the kept run, not mid-retry for the engine's stop to wait on.
      await w.runUntil('the new run waits for its event', async () => (await w.raw.runs.get(again.id))?.status === 'waiting');
    }),

    conformanceCase('runs.delete of a run with every kind of record leaves nothing behind', async (env) => {
      const { store, t0 } = env;
      const { run } = await store.runs
        .create(
          {
            id: '01900000-0000-7000-8000-000000000001',
            workflow: 'w.$x',
            version: 'v',
            input: { a: 1 },
            idempotencyKey: 'k',
            wakeAt: t0,
            // Tags, where the store keeps them: their index entries go too.
            ...(store.runs.setTags === undefined ? {} : { tags: { 'customer.$1': 'c-42', 'x}': '{y}%_' } }),
          },
          t0,
        )
        .then(async ({ run }) => ({ run: (await store.runs.claim(run.id, 'w', 30_000, t0))! }));
      await store.steps.insert(run.id, run.fence, { key: 's.$1', name: 's.$1', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'w' }, t0);
      await store.steps.transition(
        run.id,
        run.fence,
        {
          key: 's.$1',
          from: { status: ['running'], attempt: 1 },
          to: { status: 'running', attempt: 2 },
          endAttempt: { status: 'failed' },
          startAttempt: { worker: 'w' },
        },
        t0,
      );
      await store.steps.insert(run.id, run.fence, { key: 'nap', name: 'nap', kind: 'sleep', seq: 1, status: 'waiting', maxAttempts: 1, wakeAt: t0 + 5 }, t0);
      await store.state.set(run.id, run.fence, 'a.b', 1, t0);
      await store.state.set(run.id, run.fence, '$c', 2, t0);
      await store.events.deliver(run.id, 'e.1', null, t0);
      await store.events.deliver(run.id, 'e.1', 2, t0, { idempotencyKey: 'i.$1' });
      // Streams, where the store has them: every entry and the stream's own bookkeeping go too.
      await store.streams?.append(run.id, run.fence, { stream: 'tokens.$1', index: 0, data: 'x' }, t0);
      await store.streams?.append(run.id, run.fence, { stream: 'tokens.$1', index: 1, close: true }, t0);
      await store.streams?.append(run.id, run.fence, { stream: 'x}', index: 0, data: { y: 1 } }, t0);
      await store.runs.setTags?.(run.id, run.fence, { seq: 0, tags: { stage: 'paid', 'customer.$1': 'c-43' } }, t0);
      await store.runs.transition(run.id, run.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 5 }, t0);
      assert.ok((await artefacts(env, run.id)).length > 0, 'artefactsOf must see the run before it is deleted');
      assert.equal(await store.runs.delete(run.id), true);
      assert.deepEqual(await artefacts(env, run.id), []);
    }),

    conformanceCase(
      'runs.deleteMany deletes exactly the listed runs that meet the condition, with every artefact, and reports them',
      async (env) => {
        const { store, t0 } = env;
        const withRecords = async (status: 'completed' | 'failed', at: number) => {
          const { run, fence } = await runningRun(store, at);
          await store.steps.insert(run.id, fence, newStep({ key: 's', name: 's', seq: 0, status: 'succeeded', output: 1, turn: 1 }), at);
          await store.state.set(run.id, fence, 'k', 'v', at);
          await store.events.deliver(run.id, 'e', null, at);
          await store.runs.setTags?.(run.id, fence, { seq: 0, tags: { customer: 'c-42', [`run ${run.id}`]: '%' } }, at);
          const to =
            status === 'completed'
              ? { from: ['running' as const], to: status, output: 1 }
              : { from: ['running' as const], to: status, error: { name: 'Error', message: 'x' } };
          return store.runs.transition(run.id, fence, to, at);
        };
        const old1 = await withRecords('completed', t0);
        const old2 = await withRecords('completed', t0 + 1);
        const otherStatus = await withRecords('failed', t0);
        const tooNew = await withRecords('completed', t0 + 50);
        const active = (await runningRun(store, t0)).run;
        const unlisted = await withRecords('completed', t0);
        const before = new Map<string, string[]>();
        for (const run of [otherStatus, tooNew, active, unlisted]) before.set(run.id, await artefacts(env, run.id));
        const deleted = await store.runs.deleteMany!([old1.id, old2.id, otherStatus.id, tooNew.id, active.id, 'no-such-run'], {
          statuses: ['completed'],
          updatedBefore: t0 + 10,
        });
        assert.deepEqual([...deleted].sort(), [old1.id, old2.id].sort(), 'only the listed runs of those statuses updated before the time');
        for (const run of [old1, old2]) {
          assert.equal(await store.runs.get(run.id), undefined);
          assert.deepEqual(await artefacts(env, run.id), [], `every row, key or document of ${run.id} must be gone`);
        }
        for (const [id, artefactsBefore] of before) assert.deepEqual(await artefacts(env, id), artefactsBefore, `run ${id} keeps everything`);
        assert.deepEqual(await store.runs.deleteMany!([old1.id], { statuses: ['completed'], updatedBefore: t0 + 10 }), [], 'a second delete finds nothing');
        assert.deepEqual(await store.runs.deleteMany!([], { statuses: ['completed'], updatedBefore: t0 + 10 }), []);
      },
      { requires: ['deleteMany'] },
    ),
  ].map((c) => ({ ...c, requires: [...c.requires, 'artefactsOf' as const] })),
);
