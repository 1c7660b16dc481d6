import assert from 'node:assert/strict';
import type { RunStatus } from '@cairn/core';
import { conformanceCase, type ConformanceCase } from '../../case.js';
import { assertSameRecord, rejectsWithCode } from '../../fixtures/assertions.js';
import { LEASE_MS, createRun, runningRun, snapshotRun, takeOver, terminalRun } from '../../fixtures/run-fixtures.js';
import { FALSY_OUTPUTS, SAMPLE_ERROR } from '../../fixtures/sample-records.js';
import { uuidv7 } from '../../fixtures/uuid-v7.js';

/** Store contract: `runs.transition`, `runs.wake` and `runs.requestCancel`: moving a run between statuses. */
export const runTransitionCases: ConformanceCase[] = [
  conformanceCase('transition: running → waiting releases the lease and sets wakeAt', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const waiting = await store.runs.transition(run.id, fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 500 }, t0 + 2);
    assert.equal(waiting.status, 'waiting');
    assert.equal(waiting.lease, undefined);
    assert.equal(waiting.wakeAt, t0 + 500);
    assert.equal(waiting.updatedAt, t0 + 2);
    assertSameRecord(await store.runs.get(run.id), waiting);
  }),

  conformanceCase('transition: to completed stores the output and clears lease and wakeAt', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    await store.runs.wake(run.id, t0 + 1);
    const done = await store.runs.transition(run.id, fence, { from: ['running'], to: 'completed', output: { total: 12.5, ok: true } }, t0 + 2);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.output, { total: 12.5, ok: true });
    assert.equal(done.lease, undefined);
    assert.equal(done.wakeAt, undefined);
    assertSameRecord(await store.runs.get(run.id), done);
  }),

  conformanceCase('transition: to failed or cancelled stores the whole error record', async ({ store, t0 }) => {
    for (const to of ['failed', 'cancelled'] as const) {
      const { run, fence } = await runningRun(store, t0);
      const done = await store.runs.transition(run.id, fence, { from: ['running'], to, error: SAMPLE_ERROR }, t0 + 1);
      assert.equal(done.status, to);
      assertSameRecord((await store.runs.get(run.id))?.error, SAMPLE_ERROR);
      assert.equal((await store.runs.get(run.id))?.output, undefined);
    }
  }),

  conformanceCase('transition: a status outside `from` is RUN_CONFLICT and writes nothing', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    const before = await snapshotRun(store, run.id);
    await rejectsWithCode(store.runs.transition(run.id, fence, { from: ['waiting', 'pending'], to: 'completed', output: 1 }, t0 + 1), 'RUN_CONFLICT');
    assert.deepEqual(await snapshotRun(store, run.id), before);
  }),

  conformanceCase('transition: a stale fence is LEASE_LOST and writes nothing', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0, {}, 'worker-a');
    await takeOver(store, run.id, 'worker-b', t0 + LEASE_MS);
    const before = await snapshotRun(store, run.id);
    await rejectsWithCode(store.runs.transition(run.id, fence, { from: ['running'], to: 'completed', output: 'stale' }, t0 + LEASE_MS + 1), 'LEASE_LOST');
    assert.deepEqual(await snapshotRun(store, run.id), before);
  }),

  conformanceCase('transition: a terminal run never changes (RUN_CONFLICT), even when `from` names its status', async ({ store, t0 }) => {
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      const run = await terminalRun(store, t0, status);
      const before = await snapshotRun(store, run.id);
      const everything: RunStatus[] = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'];
      for (const to of everything) {
        await rejectsWithCode(
          store.runs.transition(run.id, run.fence, { from: everything, to, output: 'overwritten', error: SAMPLE_ERROR }, t0 + 5),
          'RUN_CONFLICT',
          `${status} → ${to}`,
        );
      }
      assert.deepEqual(await snapshotRun(store, run.id), before, `the ${status} run must be untouched`);
    }
  }),

  conformanceCase('transition: waiting keeps a wake-up requested since the claim when it is earlier', async ({ store, t0 }) => {
    // An event delivered while the run executes must not be lost when the run goes to sleep.
    const a = await runningRun(store, t0);
    await store.runs.wake(a.run.id, t0 + 10);
    const waitingA = await store.runs.transition(a.run.id, a.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 60_000 }, t0 + 20);
    assert.equal(waitingA.wakeAt, t0 + 10, 'the earlier wake-up wins');

    const b = await runningRun(store, t0);
    await store.runs.wake(b.run.id, t0 + 10);
    const waitingB = await store.runs.transition(b.run.id, b.fence, { from: ['running'], to: 'waiting' }, t0 + 20);
    assert.equal(waitingB.wakeAt, t0 + 10, 'a wake-up survives a wait without a timer');

    const c = await runningRun(store, t0);
    await store.runs.wake(c.run.id, t0 + 10);
    const waitingC = await store.runs.transition(c.run.id, c.fence, { from: ['running'], to: 'waiting', wakeAt: t0 + 5 }, t0 + 20);
    assert.equal(waitingC.wakeAt, t0 + 5, 'an earlier timer wins');

    const d = await runningRun(store, t0, { wakeAt: t0 });
    const waitingD = await store.runs.transition(d.run.id, d.fence, { from: ['running'], to: 'waiting' }, t0 + 20);
    assert.equal(waitingD.wakeAt, undefined, 'the wakeAt cleared by the claim must not come back');
  }),

  ...FALSY_OUTPUTS.map(({ label, value }) =>
    conformanceCase(`transition: output ${label} round-trips exactly`, async ({ store, t0 }) => {
      const { run, fence } = await runningRun(store, t0);
      const done = await store.runs.transition(
        run.id,
        fence,
        value === undefined ? { from: ['running'], to: 'completed' } : { from: ['running'], to: 'completed', output: value },
        t0 + 1,
      );
      const stored = await store.runs.get(run.id);
      assert.deepStrictEqual(done.output, value, 'as returned by transition');
      assert.deepStrictEqual(stored?.output, value, 'as read back by get');
      const listed = (await store.runs.list({ workflow: 'orders' })).runs[0];
      assert.equal(listed?.status, 'completed', 'list returns the run');
      assert.ok(listed !== undefined && !('output' in listed) && !('input' in listed), 'list returns a summary, without payloads');
    }),
  ),
  conformanceCase('wake: wakeAt becomes min(wakeAt, now)', async ({ store, t0 }) => {
    const run = await createRun(store, t0, { wakeAt: t0 + 100 });
    await store.runs.wake(run.id, t0 + 50);
    assert.equal((await store.runs.get(run.id))?.wakeAt, t0 + 50);
    await store.runs.wake(run.id, t0 + 80);
    assert.equal((await store.runs.get(run.id))?.wakeAt, t0 + 50, 'a later wake never postpones');
    const bare = await createRun(store, t0);
    await store.runs.wake(bare.id, t0 + 7);
    assert.equal((await store.runs.get(bare.id))?.wakeAt, t0 + 7, 'a run without wakeAt gets now');
  }),

  conformanceCase('wake: a no-op on terminal and missing runs', async ({ store, t0 }) => {
    const run = await terminalRun(store, t0);
    const before = await store.runs.get(run.id);
    await store.runs.wake(run.id, t0 + 5);
    assert.deepEqual(await store.runs.get(run.id), before);
    await store.runs.wake(uuidv7(), t0 + 5);
    assert.equal((await store.runs.list({})).runs.length, 1, 'waking a missing run creates nothing');
  }),
  conformanceCase('requestCancel: sets cancelRequested and wakes the run, keeping its lease', async ({ store, t0 }) => {
    const pending = await createRun(store, t0, { wakeAt: t0 + 1_000 });
    const after = await store.runs.requestCancel(pending.id, t0 + 10);
    assert.equal(after?.cancelRequested, true);
    assert.equal(after?.wakeAt, t0 + 10);
    assertSameRecord(await store.runs.get(pending.id), after);

    const { run, fence } = await runningRun(store, t0);
    const cancelled = await store.runs.requestCancel(run.id, t0 + 10);
    assert.equal(cancelled?.status, 'running');
    assert.equal(cancelled?.fence, fence);
    assert.deepEqual(cancelled?.lease, run.lease);
    assert.equal(cancelled?.cancelRequested, true);
  }),

  conformanceCase("requestCancel: stores the first request's reason; later requests keep it; no reason stores none", async ({ store, t0 }) => {
    const reason = 'customer asked — ünïcode ✓ "quoted"';
    const { run, fence } = await runningRun(store, t0);
    const first = await store.runs.requestCancel(run.id, t0 + 10, reason);
    assert.equal(first?.cancelRequested, true);
    assert.equal(first?.cancelReason, reason);
    assert.equal((await store.runs.requestCancel(run.id, t0 + 11, 'second'))?.cancelReason, reason, 'a later reason does not replace the first');
    assert.equal((await store.runs.requestCancel(run.id, t0 + 12))?.cancelReason, reason, 'a later request without one keeps it');
    assert.equal((await store.runs.renew(run.id, fence, LEASE_MS, t0 + 13)).cancelReason, reason, 'renew returns it');
    const ended = await store.runs.transition(
      run.id,
      fence,
      { from: ['running'], to: 'cancelled', error: { name: 'CairnError', message: 'cancelled', code: 'CANCELLED' } },
      t0 + 14,
    );
    assert.equal(ended.cancelReason, reason, 'the terminal run keeps it');
    assert.equal((await store.runs.get(run.id))?.cancelReason, reason);

    const plain = await createRun(store, t0);
    assert.equal((await store.runs.requestCancel(plain.id, t0 + 10))?.cancelReason, undefined);
    assert.equal(
      (await store.runs.requestCancel(plain.id, t0 + 11, 'too late'))?.cancelReason,
      undefined,
      'a reason after a request without one is not stored',
    );
    const done = await terminalRun(store, t0);
    assert.equal((await store.runs.requestCancel(done.id, t0 + 5, 'after the end'))?.cancelReason, undefined, 'a terminal run stores no reason');
  }),

  conformanceCase('requestCancel: a terminal run is returned unchanged; a missing one is undefined', async ({ store, t0 }) => {
    const run = await terminalRun(store, t0);
    const before = await store.runs.get(run.id);
    const after = await store.runs.requestCancel(run.id, t0 + 5);
    assert.equal(after?.cancelRequested, false);
    assert.deepEqual(await store.runs.get(run.id), before);
    assert.equal(await store.runs.requestCancel(uuidv7(), t0), undefined);
  }),
];
