import assert from 'node:assert/strict';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { newStep, runningRun, snapshotRun } from '../fixtures/run-fixtures.js';

/** Adversarial: writes racing a terminal transition. */
export const terminalRacesGroup: CaseGroup = caseGroup('adversarial.terminal-races', 'adversarial: writes racing a terminal transition', [
  conformanceCase('unfenced writes racing completion never change the completed run (20 rounds)', async ({ store, t0 }) => {
    for (let round = 0; round < 20; round += 1) {
      const { run, fence } = await runningRun(store, t0);
      await store.steps.insert(run.id, fence, newStep({ key: 'open', name: 'open', worker: 'w' }), t0);
      const now = t0 + 1;
      // Everything a queued-step worker, an event sender or a canceller may do at the same moment.
      const racers = [
        store.runs.transition(run.id, fence, { from: ['running'], to: 'completed', output: { round } }, now),
        store.state.set(run.id, null, 'k', round, now),
        store.steps.insert(run.id, null, newStep({ key: `late-${round}`, name: 'late', seq: 1, status: 'succeeded', output: 1 }), now),
        store.steps.transition(
          run.id,
          null,
          { key: 'open', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 'racer' }, endAttempt: { status: 'succeeded' } },
          now,
        ),
        store.events.deliver(run.id, 'go', round, now),
        store.runs.wake(run.id, now),
        store.runs.requestCancel(run.id, now),
      ];
      const [completion] = await Promise.allSettled(racers);
      assert.equal(completion?.status, 'fulfilled', `round ${round}: the completion itself must succeed`);
      const after = await store.runs.get(run.id);
      assert.equal(after?.status, 'completed', `round ${round}`);
      assert.deepEqual(after?.output, { round });
      assert.equal(after?.lease, undefined, `round ${round}: no lease on a completed run`);
      assert.equal(after?.wakeAt, undefined, `round ${round}: a wake-up racing completion must not leave a timer on it`);

      // Once completed, the same writes again: refused or no-ops, and nothing changes.
      const settled = await snapshotRun(store, run.id, ['go', 'again']);
      await Promise.allSettled([
        store.state.set(run.id, null, 'k2', round, now + 1),
        store.steps.insert(run.id, null, newStep({ key: 'later', name: 'later', seq: 2, status: 'succeeded' }), now + 1),
        store.events.deliver(run.id, 'again', round, now + 1),
        store.runs.wake(run.id, now + 1),
        store.runs.requestCancel(run.id, now + 1),
        store.runs.claim(run.id, 'thief', 1_000, now + 1),
      ]);
      assert.deepEqual(await snapshotRun(store, run.id, ['go', 'again']), settled, `round ${round}: the completed run must not change`);
    }
  }),
]);
