import assert from 'node:assert/strict';
import { conformanceCase, type ConformanceCase } from '../../case.js';
import { LEASE_MS, createRun, runningRun, terminalRun } from '../../fixtures/run-fixtures.js';

/** Store contract: `runs.findDue`: the runs whose time has come. */
export const runFindDueCases: ConformanceCase[] = [
  conformanceCase('findDue: due timers and expired leases, earliest first; nothing else', async ({ store, t0 }) => {
    const now = t0 + 10;
    const dueNow = await createRun(store, t0 - 100, { workflow: 'a', wakeAt: now });
    const dueEarly = await createRun(store, t0, { workflow: 'b', wakeAt: t0 });
    await createRun(store, t0, { wakeAt: now + 1 }); // not yet due
    await createRun(store, t0); // no timer
    const waiting = await runningRun(store, t0, { workflow: 'c' });
    await store.runs.transition(waiting.run.id, waiting.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 5 }, t0);
    const eventWait = await runningRun(store, t0);
    await store.runs.transition(eventWait.run.id, eventWait.fence, { from: ['running'], to: 'waiting' }, t0); // waits for nothing timed
    const expired = await createRun(store, t0, { workflow: 'd' });
    await store.runs.claim(expired.id, 'worker-x', 12, t0 - 10); // lease ends at t0 + 2
    await store.runs.claim((await createRun(store, t0)).id, 'worker-y', LEASE_MS, t0); // live lease
    const done = await terminalRun(store, t0);
    await store.runs.wake(done.id, t0); // a no-op: terminal runs are never due

    const due = await store.runs.findDue(now, 100);
    assert.deepEqual(due, [
      { id: dueEarly.id, workflow: 'b', reason: 'wake' },
      { id: expired.id, workflow: 'd', reason: 'lease-expired' },
      { id: waiting.run.id, workflow: 'c', reason: 'wake' },
      { id: dueNow.id, workflow: 'a', reason: 'wake' },
    ]);
    assert.deepEqual(await store.runs.findDue(now, 2), due.slice(0, 2), 'limit keeps the earliest');
    assert.deepEqual(await store.runs.findDue(t0 - 1, 100), [], 'nothing is due before its time');
  }),
];
