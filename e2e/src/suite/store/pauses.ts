import assert from 'node:assert/strict';
import type { PauseStore, WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { createRun, LEASE_MS, newStep, runningRun, snapshotRun, terminalRun } from '../fixtures/run-fixtures.js';

// Cases of this group require `pauses`: the runner skips them on a store without it.
const pausesOf = (store: WorkflowStore): PauseStore => store.pauses as PauseStore;
const dueIds = async (store: WorkflowStore, now: number) => (await store.runs.findDue(now, 100)).map((d) => d.id);

/** The pause contract (`WorkflowStore.pauses`): a paused run is never claimed nor due; nothing else changes. */
export const pausesGroup: CaseGroup = caseGroup('store.pauses', 'store: pause and resume', [
  conformanceCase(
    'a paused pending run is neither due nor claimable; resumed, it is due now and claimable',
    async ({ store, t0 }) => {
      const run = await createRun(store, t0, { wakeAt: t0 });
      const paused = await pausesOf(store).pauseRun(run.id, { scope: 'run', reason: 'downstream broken' }, t0 + 1);
      assert.equal(paused.changed, true);
      assert.deepEqual(paused.run.paused, { at: t0 + 1, scope: 'run', reason: 'downstream broken' });
      assert.equal(paused.run.updatedAt, run.updatedAt, 'a pause changes nothing but the mark');
      assert.equal(paused.run.wakeAt, t0, 'a pause keeps the wake-up time');
      assert.deepEqual((await store.runs.get(run.id))?.paused, paused.run.paused, 'get returns the mark');
      const listed = (await store.runs.list({ workflow: run.workflow })).runs.find((r) => r.id === run.id);
      assert.deepEqual(listed?.paused, paused.run.paused, 'list summaries carry the mark');
      assert.ok(!(await dueIds(store, t0 + 100)).includes(run.id), 'a paused run is not due');
      assert.equal(await store.runs.claim(run.id, 'worker-a', LEASE_MS, t0 + 100), undefined, 'a paused run is not claimed');
      assert.equal((await store.runs.get(run.id))?.status, 'pending', 'the refused claim wrote nothing');
      const resumed = await pausesOf(store).resumeRun(run.id, t0 + 200);
      assert.equal(resumed.changed, true);
      assert.equal(resumed.run.paused, undefined);
      assert.equal(resumed.run.wakeAt, t0, 'resume keeps an earlier wake-up time');
      assert.ok((await dueIds(store, t0 + 200)).includes(run.id), 'a resumed run is due');
      const claimed = await store.runs.claim(run.id, 'worker-a', LEASE_MS, t0 + 201);
      assert.ok(claimed, 'a resumed run is claimed');
      assert.equal(claimed.paused, undefined);
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'resume wakes a run whose wake-up is later or absent, so recovery dispatches it at once',
    async ({ store, t0 }) => {
      const run = await createRun(store, t0, { wakeAt: t0 + 3_600_000 });
      await pausesOf(store).pauseRun(run.id, { scope: 'run' }, t0 + 1);
      const resumed = await pausesOf(store).resumeRun(run.id, t0 + 10);
      assert.equal(resumed.run.wakeAt, t0 + 10);
      assert.ok((await dueIds(store, t0 + 10)).includes(run.id));
      const waiting = await createRun(store, t0);
      const { fence } = { fence: (await store.runs.claim(waiting.id, 'w', LEASE_MS, t0))?.fence ?? -1 };
      await store.runs.transition(waiting.id, fence, { from: ['running'], to: 'waiting' }, t0 + 1);
      await pausesOf(store).pauseRun(waiting.id, { scope: 'run' }, t0 + 2);
      assert.equal((await pausesOf(store).resumeRun(waiting.id, t0 + 20)).run.wakeAt, t0 + 20);
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'a run paused while running keeps its lease and fence: its writes go on, it suspends, and it is not due or claimable after',
    async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      await pausesOf(store).pauseRun(run.id, { scope: 'run' }, t0 + 1);
      const renewed = await store.runs.renew(run.id, fence, LEASE_MS, t0 + 2);
      assert.ok(renewed.paused, 'renew returns the mark, so the lease holder learns of the pause');
      await store.steps.insert(run.id, fence, newStep({ status: 'succeeded', output: 'ok' }), t0 + 3);
      await store.state.set(run.id, fence, 'k', 1, t0 + 3);
      assert.equal(await store.runs.claim(run.id, 'worker-b', LEASE_MS, t0 + 3 + 2 * LEASE_MS), undefined, 'not taken over after its lease expired');
      assert.ok(!(await dueIds(store, t0 + 3 + 2 * LEASE_MS)).includes(run.id), 'an expired lease of a paused run is not due');
      await store.events.deliver(run.id, 'go', 1, t0 + 4);
      const waiting = await store.runs.transition(run.id, fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 5 }, t0 + 5);
      assert.equal(waiting.status, 'waiting');
      assert.ok(waiting.paused, 'the mark survives the transition');
      assert.ok(!(await dueIds(store, t0 + 100)).includes(run.id), 'a waiting paused run past its wake-up is not due');
      assert.equal(await store.runs.claim(run.id, 'worker-a', LEASE_MS, t0 + 100), undefined, 'not even by its last owner');
      await pausesOf(store).resumeRun(run.id, t0 + 200);
      assert.ok((await dueIds(store, t0 + 200)).includes(run.id));
      assert.ok(await store.runs.claim(run.id, 'worker-a', LEASE_MS, t0 + 200));
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'pausing twice keeps the first pause and writes nothing; resuming a run that is not paused writes nothing',
    async ({ store, t0 }) => {
      const run = await createRun(store, t0);
      await pausesOf(store).pauseRun(run.id, { scope: 'run', reason: 'first' }, t0 + 1);
      const before = await snapshotRun(store, run.id);
      const again = await pausesOf(store).pauseRun(run.id, { scope: 'workflow', reason: 'second' }, t0 + 2);
      assert.equal(again.changed, false);
      assert.deepEqual(again.run.paused, { at: t0 + 1, scope: 'run', reason: 'first' });
      assert.deepEqual(await snapshotRun(store, run.id), before);
      const other = await createRun(store, t0);
      const untouched = await snapshotRun(store, other.id);
      const noop = await pausesOf(store).resumeRun(other.id, t0 + 3);
      assert.equal(noop.changed, false);
      assert.deepEqual(await snapshotRun(store, other.id), untouched);
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'resume with a scope lifts only a pause of that scope',
    async ({ store, t0 }) => {
      const byRun = await createRun(store, t0);
      const byWorkflow = await createRun(store, t0);
      await pausesOf(store).pauseRun(byRun.id, { scope: 'run' }, t0 + 1);
      await pausesOf(store).pauseRun(byWorkflow.id, { scope: 'workflow', reason: 'all of them' }, t0 + 1);
      const kept = await pausesOf(store).resumeRun(byRun.id, t0 + 2, 'workflow');
      assert.equal(kept.changed, false);
      assert.ok((await store.runs.get(byRun.id))?.paused, 'a run paused on its own stays paused');
      const lifted = await pausesOf(store).resumeRun(byWorkflow.id, t0 + 2, 'workflow');
      assert.equal(lifted.changed, true);
      assert.equal((await store.runs.get(byWorkflow.id))?.paused, undefined);
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'unknown and ended runs: RUN_NOT_FOUND and RUN_CONFLICT, nothing written',
    async ({ store, t0 }) => {
      await rejectsWithCode(pausesOf(store).pauseRun('no-such-run', { scope: 'run' }, t0), 'RUN_NOT_FOUND');
      await rejectsWithCode(pausesOf(store).resumeRun('no-such-run', t0), 'RUN_NOT_FOUND');
      assert.equal(await store.runs.get('no-such-run'), undefined, 'nothing was created');
      const ended = await terminalRun(store, t0);
      const before = await snapshotRun(store, ended.id);
      await rejectsWithCode(pausesOf(store).pauseRun(ended.id, { scope: 'run' }, t0 + 1), 'RUN_CONFLICT');
      await rejectsWithCode(pausesOf(store).resumeRun(ended.id, t0 + 1), 'RUN_CONFLICT');
      assert.deepEqual(await snapshotRun(store, ended.id), before);
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'a pause racing claims: a claim that wins returns an unpaused run; once paused, every later claim is refused',
    async ({ store, t0 }) => {
      for (let round = 0; round < 10; round++) {
        const run = await createRun(store, t0, { wakeAt: t0 });
        const [claims, pause] = await Promise.all([
          Promise.all(['a', 'b', 'c'].map((owner) => store.runs.claim(run.id, owner, LEASE_MS, t0 + 1))),
          pausesOf(store).pauseRun(run.id, { scope: 'run' }, t0 + 1),
        ]);
        const won = claims.filter((c) => c !== undefined);
        assert.ok(won.length <= 1, `round ${round}: at most one claim wins`);
        for (const claimed of won) assert.equal(claimed?.paused, undefined, `round ${round}: no claim returns a paused run`);
        assert.equal(pause.changed, true);
        assert.equal(await store.runs.claim(run.id, 'late', LEASE_MS, t0 + 2 * LEASE_MS), undefined, `round ${round}: refused once paused`);
      }
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'resume racing a claim: the claim either is refused (still paused) or takes the resumed run; never both paused and claimed',
    async ({ store, t0 }) => {
      for (let round = 0; round < 10; round++) {
        const run = await createRun(store, t0, { wakeAt: t0 });
        await pausesOf(store).pauseRun(run.id, { scope: 'run' }, t0);
        const [claimed] = await Promise.all([store.runs.claim(run.id, 'a', LEASE_MS, t0 + 1), pausesOf(store).resumeRun(run.id, t0 + 1)]);
        if (claimed) assert.equal(claimed.paused, undefined, `round ${round}`);
        const after = await store.runs.get(run.id);
        assert.equal(after?.paused, undefined);
        assert.equal(after?.status, claimed ? 'running' : 'pending');
        if (!claimed) assert.ok((await dueIds(store, t0 + 1)).includes(run.id), `round ${round}: the resumed unclaimed run is due`);
      }
    },
    { requires: ['pauses'] },
  ),

  conformanceCase(
    'workflow pauses: one record per name, the first reason kept, listed by name, removed by resumeWorkflow',
    async ({ store, t0 }) => {
      const pauses = pausesOf(store);
      assert.equal(await pauses.getWorkflowPause('billing'), undefined);
      const first = await pauses.pauseWorkflow('billing', t0, 'bank down');
      assert.deepEqual(first, { pause: { workflow: 'billing', at: t0, reason: 'bank down' }, changed: true });
      const again = await pauses.pauseWorkflow('billing', t0 + 1, 'other');
      assert.deepEqual(again, { pause: { workflow: 'billing', at: t0, reason: 'bank down' }, changed: false });
      await pauses.pauseWorkflow('auth', t0 + 2);
      assert.deepEqual(await pauses.getWorkflowPause('auth'), { workflow: 'auth', at: t0 + 2 });
      assert.deepEqual(
        (await pauses.listWorkflowPauses()).map((p) => p.workflow),
        ['auth', 'billing'],
      );
      assert.equal(await pauses.resumeWorkflow('billing'), true);
      assert.equal(await pauses.resumeWorkflow('billing'), false);
      assert.equal(await pauses.getWorkflowPause('billing'), undefined);
      assert.deepEqual(
        (await pauses.listWorkflowPauses()).map((p) => p.workflow),
        ['auth'],
      );
    },
    { requires: ['pauses'] },
  ),
]);
