import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CairnError } from '@cairn/core';
import { createKyselyStore, migrateToLatest } from '../../src/index.js';
import { dropRoutines } from '../../src/routines/install-routines.js';
import { runStatements } from '../../src/schema/run-statements.js';
import { dialectOf } from '../../src/dialect/detect.js';
import { tableNames } from '../../src/schema/tables.js';
import { dropPrefix } from './harness.js';
import { freshPrefix, type Target } from './targets.js';
import { T0, LEASE, id, runningRun, openLogged, type StoreContext } from './store-case-kit.js';

/**
 * The step write path on every dialect: what an inline step sends, step writes of many runs at once
 * (no deadlock between runs), and the error a database without the step routines gives.
 * Registered inside `storeCases`.
 */
export function stepWriteCases(target: Target, ctx: StoreContext): void {
  it('an inline step (insert running + finish) costs the expected statements', async () => {
    const { db, statements } = await openLogged(target);
    try {
      const store = createKyselyStore({ db, tablePrefix: ctx.prefix });
      const run = await runningRun(store);
      statements.length = 0;
      await store.steps.insert(run.id, run.fence, { key: 'i', name: 'i', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'w1' }, T0);
      await store.steps.transition(
        run.id,
        run.fence,
        { key: 'i', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 1 }, endAttempt: { status: 'succeeded', output: 1 } },
        T0 + 1,
      );
      // Kysely logs every statement it sends, BEGIN and COMMIT included: one per write on every
      // dialect (a routine call on the servers, one statement plus its trigger on SQLite).
      const expected = 2;
      assert.equal(statements.length, expected, statements.join('\n'));
      const roundTrips = statements.length;
      console.log(`# ${target.dialect}: inline step = ${roundTrips} ${target.dialect === 'sqlite' ? 'in-process statements' : 'round trips'}`);
      assert.deepEqual(
        (await store.history.list(run.id)).map((a) => [a.attempt, a.status]),
        [[1, 'succeeded']],
      );
    } finally {
      await db.destroy();
    }
  });

  it('step writes of 12 runs at once over separate connections never fail (no deadlock between runs)', async () => {
    // Each run's steps are written one after another, the runs side by side, as a pool of
    // workers does: on MariaDB a locking read of a step that did not exist yet used to take a
    // gap lock that a neighbouring run's insert then deadlocked on.
    const peers = await Promise.all(Array.from({ length: 4 }, () => target.open()));
    const stores = peers.map((db) => createKyselyStore({ db, tablePrefix: ctx.prefix }));
    try {
      const runs = await Promise.all(Array.from({ length: 12 }, () => runningRun(ctx.store)));
      await Promise.all(
        runs.map(async (run, r) => {
          const store = stores[r % stores.length]!;
          for (let i = 0; i < 15; i++) {
            const key = `s${i}`;
            await store.steps.insert(run.id, run.fence, { key, name: key, kind: 'task', seq: i, status: 'running', maxAttempts: 1, worker: 'w' }, T0);
            await store.steps.transition(
              run.id,
              run.fence,
              { key, from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: i }, endAttempt: { status: 'succeeded', output: i } },
              T0,
            );
          }
        }),
      );
      for (const run of runs) {
        const steps = await ctx.store.steps.load(run.id);
        assert.deepEqual(
          steps.map((s) => [s.key, s.status, s.output]),
          Array.from({ length: 15 }, (_, i) => [`s${i}`, 'succeeded', i]),
        );
        assert.equal((await ctx.store.history.list(run.id)).length, 15);
      }
    } finally {
      for (const db of peers) await db.destroy();
    }
  });

  it('a database migrated without the step routines gets an error that says to run the migrations', async () => {
    const db = await target.open();
    const prefix = freshPrefix();
    try {
      await migrateToLatest(db, { tablePrefix: prefix });
      const store = createKyselyStore({ db, tablePrefix: prefix });
      const run = await runningRun(store);
      // Down of cairn_0012_step_insert_v2, then of cairn_0002_step_routines: no step routine left.
      await runStatements(db, await dialectOf(target.dialect).routines.removeStepInsertV2(db, tableNames(prefix)));
      await dropRoutines(db, tableNames(prefix), target.dialect);
      if (target.dialect === 'mysql') {
        // MySQL's claim, renew and run transition are procedures too.
        const { run: other } = await store.runs.create({ id: id(), workflow: 'wf', version: 'v1', input: null }, T0);
        await assert.rejects(
          store.runs.claim(other.id, 'w1', LEASE, T0),
          (error: unknown) => CairnError.is(error, 'STORE_ERROR') && /run Cairn's migrations/.test((error as Error).message),
        );
      }
      await assert.rejects(
        store.steps.insert(run.id, run.fence, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 1 }, T0),
        (error: unknown) =>
          CairnError.is(error, 'STORE_ERROR') &&
          /run Cairn's migrations/.test((error as Error).message) &&
          /cairn_0002_step_routines/.test((error as Error).message),
      );
      await assert.rejects(
        store.steps.transition(run.id, run.fence, { key: 'a', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded' } }, T0),
        (error: unknown) => CairnError.is(error, 'STORE_ERROR') && /run Cairn's migrations/.test((error as Error).message),
      );
      assert.deepEqual(await store.steps.load(run.id), [], 'nothing was written');
    } finally {
      await dropPrefix(db, prefix);
      await db.destroy();
    }
  });
}
