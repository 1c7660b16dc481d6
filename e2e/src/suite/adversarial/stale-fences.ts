import assert from 'node:assert/strict';
import type { WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { LEASE_MS, newStep, runningRun, snapshotRun, takeOver } from '../fixtures/run-fixtures.js';

/**
 * A worker (`zombie`) whose lease was taken over tries every fenced write; each must be refused
 * with LEASE_LOST and nothing may change, as seen through `observer`.
 */
async function zombieWritesNothing(zombie: WorkflowStore, owner: WorkflowStore, t0: number): Promise<void> {
  const { run, fence: stale } = await runningRun(zombie, t0, {}, 'zombie');
  await zombie.steps.insert(run.id, stale, newStep({ key: 'open', name: 'open' }), t0);
  await zombie.state.set(run.id, stale, 'progress', 'zombie was here', t0);
  const now = t0 + LEASE_MS;
  const fresh = await takeOver(owner, run.id, 'successor', now);
  await owner.steps.insert(run.id, fresh, newStep({ key: 'mine', name: 'mine', seq: 1 }), now);
  await owner.state.set(run.id, fresh, 'progress', 'successor', now);
  await owner.events.deliver(run.id, 'go', 1, now);
  const before = await snapshotRun(owner, run.id, ['go']);

  // One at a time: each attempt starts only when the previous one was refused.
  const attempts: Array<[string, () => Promise<unknown>]> = [
    ['runs.transition → completed', () => zombie.runs.transition(run.id, stale, { from: ['running'], to: 'completed', output: 'zombie' }, now + 1)],
    ['runs.transition → waiting', () => zombie.runs.transition(run.id, stale, { from: ['running'], to: 'waiting', wakeAt: now + 999 }, now + 1)],
    ['runs.renew', () => zombie.runs.renew(run.id, stale, LEASE_MS, now + 1)],
    ['steps.insert', () => zombie.steps.insert(run.id, stale, newStep({ key: 'late', name: 'late', seq: 2 }), now + 1)],
    [
      'steps.transition of its own step',
      () =>
        zombie.steps.transition(
          run.id,
          stale,
          { key: 'open', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 'zombie' }, endAttempt: { status: 'succeeded' } },
          now + 1,
        ),
    ],
    [
      'steps.transition of the successor’s step',
      () =>
        zombie.steps.transition(
          run.id,
          stale,
          { key: 'mine', from: { status: ['running'], attempt: 1 }, to: { status: 'failed', error: { name: 'Error', message: 'zombie' } } },
          now + 1,
        ),
    ],
    ['state.set of an existing key', () => zombie.state.set(run.id, stale, 'progress', 'zombie again', now + 1)],
    ['state.set of a new key', () => zombie.state.set(run.id, stale, 'zombie-key', true, now + 1)],
  ];
  for (const [what, attempt] of attempts) await rejectsWithCode(attempt(), 'LEASE_LOST', `zombie ${what}`);
  assert.deepEqual(await snapshotRun(owner, run.id, ['go']), before, 'the refused writes changed nothing');
  assert.deepEqual(await snapshotRun(zombie, run.id, ['go']), before, 'as seen by the zombie, too');
}

/** Adversarial: stale fencing tokens. */
export const staleFencesGroup: CaseGroup = caseGroup('adversarial.stale-fences', 'adversarial: stale fencing tokens', [
  conformanceCase('a worker whose lease was taken over can write nothing at all', async ({ store, t0 }) => {
    await zombieWritesNothing(store, store, t0);
  }),

  conformanceCase(
    'a zombie on one store instance can write nothing after a takeover on another',
    async (env) => {
      await zombieWritesNothing(env.store, await env.openPeer(), env.t0);
    },
    { requires: ['multiProcess'] },
  ),
]);
