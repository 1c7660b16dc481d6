import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { CairnError, type Json, type WorkflowStore } from '@cairn/core';
import { CAIRN_MIGRATION_NAMES, cairnMigrations, createKyselyStore, detectDialect, migrateToLatest } from '../../src/index.js';
import { dropRoutines } from '../../src/routines/install-routines.js';
import { runStatements } from '../../src/schema/run-statements.js';
import { dialectOf } from '../../src/dialect/detect.js';
import { tableNames } from '../../src/schema/tables.js';
import type { AnyDb } from './databases.js';
import { artefactsIn, dropPrefix } from './harness.js';
import { stepTurnMigrationCase } from './step-turn-cases.js';
import { eventMessagesMigrationCase } from './event-messages-cases.js';
import { runDeadlineMigrationCase } from './run-deadline-cases.js';
import { operationsMigrationCase } from './operations-migration-cases.js';
import { runTraceContextMigrationCase } from './run-trace-context-cases.js';
import { slotCases } from './slot-cases.js';
import { freshPrefix, type Target } from './targets.js';

const T0 = 1_750_000_000_000;
const LEASE = 30_000;
const id = () => randomUUID();

/** A promise opened from outside. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function rejects(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => CairnError.is(error) && error.code === code);
}

/** One store on a fresh prefix of the target, with its own Kysely instance. */
async function openStore(target: Target): Promise<{ store: WorkflowStore; db: AnyDb; prefix: string; done(): Promise<void> }> {
  const db = await target.open();
  const prefix = freshPrefix();
  await migrateToLatest(db, { tablePrefix: prefix });
  const store = createKyselyStore({ db, tablePrefix: prefix });
  return {
    store,
    db,
    prefix,
    async done() {
      try {
        await store.close();
        await dropPrefix(db, prefix);
      } finally {
        await db.destroy();
      }
    },
  };
}

async function runningRun(store: WorkflowStore, owner = 'w1') {
  const { run } = await store.runs.create({ id: id(), workflow: 'wf', version: 'v1', input: { n: 1 } }, T0);
  const claimed = await store.runs.claim(run.id, owner, LEASE, T0);
  assert.ok(claimed);
  return claimed;
}

/** A Kysely instance of its own on the target, and every statement it sends (Kysely's query log). */
async function openLogged(target: Target): Promise<{ db: AnyDb; statements: string[] }> {
  const statements: string[] = [];
  const db = await target.open((event) => {
    if (event.level === 'query') statements.push(event.query.sql);
  });
  return { db, statements };
}

/** The direct contract tests of the brief, on one dialect. */
export function storeCases(target: Target): void {
  describe(`@cairn/kysely on ${target.dialect}`, { skip: target.skip === undefined ? false : `no ${target.dialect} server: ${target.skip}` }, () => {
    let ctx: Awaited<ReturnType<typeof openStore>>;
    before(async () => {
      await target.setup();
      ctx = await openStore(target);
    });
    after(async () => {
      await ctx?.done();
      await target.teardown();
    });

    it('detects its dialect and never destroys a Kysely instance it did not create', async () => {
      assert.equal(detectDialect(ctx.db), target.dialect);
      const db = await target.open();
      const store = createKyselyStore({ db, tablePrefix: ctx.prefix });
      assert.equal(store.name, `kysely-${target.dialect}`);
      await store.close();
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
      assert.equal(Number(rows[0]?.one), 1, 'the user’s db still works after store.close()');
      await db.destroy();
    });

    it('ships its schema as migrations for the user’s own Migrator', async () => {
      const db = await target.open();
      const prefix = freshPrefix();
      try {
        const migrator = new Migrator({
          db,
          provider: cairnMigrations({ tablePrefix: prefix }),
          migrationTableName: `${prefix}kmig`,
          migrationLockTableName: `${prefix}kmig_lock`,
        });
        const first = await migrator.migrateToLatest();
        assert.equal(first.error, undefined);
        assert.deepEqual(
          first.results?.map((r) => [r.migrationName, r.status]),
          CAIRN_MIGRATION_NAMES.map((name) => [name, 'Success']),
        );
        assert.deepEqual((await migrator.migrateToLatest()).results, [], 'a second run has nothing to do');
        const store = createKyselyStore({ db, tablePrefix: prefix });
        assert.equal((await store.runs.create({ id: id(), workflow: 'm', version: '1', input: null }, T0)).created, true);
      } finally {
        await dropPrefix(db, prefix);
        for (const table of [`${prefix}kmig`, `${prefix}kmig_lock`]) await db.schema.dropTable(table).ifExists().execute();
        await db.destroy();
      }
    });

    it('idempotent create: of 8 concurrent creates with one key exactly one creates', async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, () => ctx.store.runs.create({ id: id(), workflow: 'idem', version: 'v1', input: 1, idempotencyKey: 'k-1' }, T0)),
      );
      assert.equal(results.filter((r) => r.created).length, 1);
      assert.equal(new Set(results.map((r) => r.run.id)).size, 1);
      await rejects(ctx.store.runs.create({ id: results[0]!.run.id, workflow: 'other', version: 'v1', input: 1 }, T0), 'INVALID_INPUT');
    });

    it('8 racing claims over separate connections: exactly one wins', async () => {
      const { run } = await ctx.store.runs.create({ id: id(), workflow: 'race', version: 'v1', input: null }, T0);
      const peers = await Promise.all(Array.from({ length: 3 }, () => target.open()));
      const stores = [ctx.store, ...peers.map((db) => createKyselyStore({ db, tablePrefix: ctx.prefix }))];
      try {
        const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => stores[i % stores.length]!.runs.claim(run.id, `owner-${i}`, LEASE, T0)));
        const winners = claims.filter((c) => c !== undefined);
        assert.equal(winners.length, 1);
        assert.equal(winners[0]?.fence, 1);
        assert.equal((await ctx.store.runs.get(run.id))?.lease?.owner, winners[0]?.lease?.owner);
      } finally {
        for (const db of peers) await db.destroy();
      }
    });

    it('a stale fence is LEASE_LOST and writes nothing', async () => {
      const run = await runningRun(ctx.store, 'old');
      await ctx.store.steps.insert(run.id, run.fence, { key: 's', name: 's', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'old' }, T0);
      const taken = await ctx.store.runs.claim(run.id, 'new', LEASE, T0 + LEASE);
      assert.equal(taken?.fence, run.fence + 1);
      const before = [await ctx.store.steps.load(run.id), await ctx.store.history.list(run.id), await ctx.store.state.get(run.id)];
      await rejects(
        ctx.store.steps.insert(run.id, run.fence, { key: 'x', name: 'x', kind: 'task', seq: 1, status: 'running', maxAttempts: 1, worker: 'old' }, T0 + 1),
        'LEASE_LOST',
      );
      await rejects(
        ctx.store.steps.transition(
          run.id,
          run.fence,
          { key: 's', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 1 }, endAttempt: { status: 'succeeded' } },
          T0 + 1,
        ),
        'LEASE_LOST',
      );
      await rejects(ctx.store.state.set(run.id, run.fence, 'k', 1, T0 + 1), 'LEASE_LOST');
      await rejects(ctx.store.runs.transition(run.id, run.fence, { from: ['running'], to: 'completed' }, T0 + 1), 'LEASE_LOST');
      await rejects(ctx.store.runs.renew(run.id, run.fence, LEASE, T0 + 1), 'LEASE_LOST');
      assert.deepEqual([await ctx.store.steps.load(run.id), await ctx.store.history.list(run.id), await ctx.store.state.get(run.id)], before);
    });

    it('compare-and-set conflicts: STEP_CONFLICT, RUN_CONFLICT, RUN_NOT_FOUND', async () => {
      const run = await runningRun(ctx.store);
      const step = { key: 'c', name: 'c', kind: 'task' as const, seq: 0, status: 'running' as const, maxAttempts: 3, worker: 'w1' };
      assert.equal((await ctx.store.steps.insert(run.id, run.fence, step, T0)).created, true);
      assert.equal((await ctx.store.steps.insert(run.id, run.fence, step, T0)).created, false);
      await rejects(
        ctx.store.steps.transition(run.id, run.fence, { key: 'c', from: { status: ['running'], attempt: 2 }, to: { status: 'succeeded' } }, T0),
        'STEP_CONFLICT',
      );
      await rejects(
        ctx.store.steps.transition(run.id, run.fence, { key: 'missing', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded' } }, T0),
        'STEP_CONFLICT',
      );
      const racers = await Promise.allSettled(
        Array.from({ length: 4 }, () =>
          ctx.store.steps.transition(
            run.id,
            null,
            { key: 'c', from: { status: ['running'], attempt: 1 }, to: { status: 'retry_wait', attempt: 2 }, endAttempt: { status: 'failed' } },
            T0 + 1,
          ),
        ),
      );
      assert.equal(racers.filter((r) => r.status === 'fulfilled').length, 1, 'one step CAS wins');
      await rejects(ctx.store.runs.transition(run.id, run.fence, { from: ['waiting'], to: 'running' }, T0), 'RUN_CONFLICT');
      await ctx.store.runs.transition(run.id, run.fence, { from: ['running'], to: 'completed', output: 0 }, T0 + 2);
      await rejects(ctx.store.runs.transition(run.id, run.fence, { from: ['completed'], to: 'failed' }, T0), 'RUN_CONFLICT');
      await rejects(ctx.store.steps.insert(run.id, run.fence, { ...step, key: 'late' }, T0), 'RUN_CONFLICT');
      await rejects(ctx.store.state.set(run.id, null, 'k', 1, T0), 'RUN_CONFLICT');
      await rejects(ctx.store.steps.insert(id(), null, step, T0), 'RUN_NOT_FOUND');
      assert.equal(await ctx.store.runs.claim(run.id, 'w9', LEASE, T0 + 10 * LEASE), undefined, 'a terminal run cannot be claimed');
    });

    it('wakeAt: a wake during the lease survives the transition to waiting; claim clears it; findDue sees it', async () => {
      const run = await runningRun(ctx.store);
      await ctx.store.runs.wake(run.id, T0 + 5);
      const waiting = await ctx.store.runs.transition(run.id, run.fence, { from: ['running'], to: 'waiting', wakeAt: T0 + 60_000 }, T0 + 6);
      assert.equal(waiting.wakeAt, T0 + 5, 'the earlier wake-up wins');
      assert.equal(waiting.lease, undefined);
      const due = await ctx.store.runs.findDue(T0 + 5, 1000);
      assert.ok(due.some((d) => d.id === run.id && d.reason === 'wake'));
      const claimed = await ctx.store.runs.claim(run.id, 'w2', LEASE, T0 + 7);
      assert.equal(claimed?.wakeAt, undefined);
      assert.ok((await ctx.store.runs.findDue(T0 + 7 + LEASE, 1000)).some((d) => d.id === run.id && d.reason === 'lease-expired'));
      const cancelled = await ctx.store.runs.requestCancel(run.id, T0 + 8);
      assert.equal(cancelled?.cancelRequested, true);
      assert.equal(cancelled?.wakeAt, T0 + 8);
    });

    it('outputs: undefined, null, 0, false and "" stay distinct', async () => {
      const run = await runningRun(ctx.store);
      const values: Array<Json | undefined> = [undefined, null, 0, false, '', [], {}];
      for (const [seq, output] of values.entries()) {
        await ctx.store.steps.insert(
          run.id,
          run.fence,
          { key: `o${seq}`, name: 'o', kind: 'task', seq, status: 'succeeded', maxAttempts: 1, ...(output === undefined ? {} : { output }) },
          T0,
        );
      }
      const loaded = await ctx.store.steps.load(run.id);
      assert.deepEqual(
        loaded.map((s) => ('output' in s ? s.output : 'absent')),
        ['absent', null, 0, false, '', [], {}],
      );
      const done = await ctx.store.runs.transition(run.id, run.fence, { from: ['running'], to: 'completed', output: null }, T0 + 1);
      assert.equal(done.output, null);
      assert.ok('output' in (await ctx.store.runs.get(run.id))!);
    });

    it('hostile keys round-trip byte for byte and stay distinct (NUL, lone surrogates, marker, case, spaces, 5000 chars)', async () => {
      const run = await runningRun(ctx.store);
      const keys = [
        'a',
        'A',
        'a ',
        ' a',
        'nul\u0000inside',
        '\u0000',
        'lone \ud800 surrogate',
        '\udc00',
        '\u0001{"json":1}',
        '\u0001',
        'é',
        'e\u0301',
        '🚀',
        'k'.repeat(5000),
        "'; drop table x; --",
        '',
      ];
      for (const [i, key] of keys.entries()) await ctx.store.state.set(run.id, run.fence, key, i, T0);
      const state = await ctx.store.state.get(run.id);
      assert.equal(Object.keys(state).length, keys.length);
      for (const [i, key] of keys.entries()) assert.equal(state[key], i, `state key ${JSON.stringify(key.slice(0, 30))}`);
      for (const [i, key] of keys.entries()) {
        await ctx.store.steps.insert(run.id, run.fence, { key, name: key, kind: 'task', seq: i, status: 'succeeded', maxAttempts: 1, output: i }, T0);
        assert.deepEqual(await ctx.store.events.deliver(run.id, key, i, T0), { delivered: true, duplicate: false, seq: 1 });
      }
      assert.deepEqual(
        (await ctx.store.steps.load(run.id)).map((s) => [s.key, s.name, s.output]),
        keys.map((k, i) => [k, k, i]),
      );
      for (const [i, key] of keys.entries()) assert.equal((await ctx.store.events.get(run.id, key, 1))?.payload, i);
    });

    it('20 concurrent state.set of different keys over separate connections: none lost', async () => {
      const run = await runningRun(ctx.store);
      const peers = await Promise.all(Array.from({ length: 3 }, () => target.open()));
      const stores = [ctx.store, ...peers.map((db) => createKyselyStore({ db, tablePrefix: ctx.prefix }))];
      try {
        await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % stores.length]!.state.set(run.id, run.fence, `key-${i}`, { i }, T0 + i)));
        const state = await ctx.store.state.get(run.id);
        assert.deepEqual(Object.keys(state).sort(), Array.from({ length: 20 }, (_, i) => `key-${i}`).sort());
      } finally {
        for (const db of peers) await db.destroy();
      }
    });

    it('delete leaves no row of the run in any table', async () => {
      const run = await runningRun(ctx.store);
      await ctx.store.steps.insert(run.id, run.fence, { key: 's', name: 's', kind: 'task', seq: 0, status: 'running', maxAttempts: 2, worker: 'w1' }, T0);
      await ctx.store.steps.transition(
        run.id,
        run.fence,
        { key: 's', from: { status: ['running'], attempt: 1 }, to: { status: 'retry_wait', attempt: 2 }, endAttempt: { status: 'failed' } },
        T0 + 1,
      );
      await ctx.store.state.set(run.id, run.fence, 'k', 'v', T0);
      await ctx.store.events.deliver(run.id, 'e', 1, T0);
      assert.ok((await artefactsIn(ctx.db, ctx.prefix, run.id)).length >= 5);
      assert.equal(await ctx.store.runs.delete(run.id), true);
      assert.deepEqual(await artefactsIn(ctx.db, ctx.prefix, run.id), []);
      assert.equal(await ctx.store.runs.delete(run.id), false);
    });

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

    stepTurnMigrationCase(target);
    runDeadlineMigrationCase(target);
    eventMessagesMigrationCase(target);
    operationsMigrationCase(target);
    runTraceContextMigrationCase(target);
    slotCases(target);

    it("PostgreSQL: a running step's start commits asynchronously, its finish durably; asyncStartCommit: false keeps both durable", {
      skip: target.dialect !== 'postgres' && 'PostgreSQL only',
    }, async () => {
      const run = await runningRun(ctx.store);
      // Inside an explicit transaction on one connection, the setting the routine made for its own
      // transaction is visible with SHOW before COMMIT.
      const settingAfter = (asyncStartCommit: boolean, write: (store: WorkflowStore) => Promise<unknown>) =>
        ctx.db.connection().execute(async (conn) => {
          await sql`begin`.execute(conn);
          try {
            // The test server may run with synchronous_commit off: start every check from on.
            await sql`set local synchronous_commit = on`.execute(conn);
            await write(createKyselyStore({ db: conn, tablePrefix: ctx.prefix, asyncStartCommit }));
            return String((await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(conn)).rows[0]?.synchronous_commit);
          } finally {
            await sql`commit`.execute(conn);
          }
        });
      const start = (key: string) => (store: WorkflowStore) =>
        store.steps.insert(run.id, run.fence, { key, name: key, kind: 'task', seq: 0, status: 'running', maxAttempts: 1, worker: 'w' }, T0);
      assert.equal(await settingAfter(true, start('a')), 'off');
      assert.equal(
        await settingAfter(true, (store) =>
          store.steps.transition(
            run.id,
            run.fence,
            { key: 'a', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 1 }, endAttempt: { status: 'succeeded', output: 1 } },
            T0,
          ),
        ),
        'on',
      );
      assert.equal(await settingAfter(false, start('b')), 'on');
      assert.equal(
        await settingAfter(true, (store) =>
          store.steps.insert(run.id, run.fence, { key: 'c', name: 'c', kind: 'sleep', seq: 1, status: 'waiting', maxAttempts: 1, wakeAt: T0 }, T0),
        ),
        'on',
        'only a running start is asynchronous',
      );
      assert.deepEqual(
        (await ctx.store.steps.load(run.id)).map((s) => [s.key, s.status]),
        [
          ['a', 'succeeded'],
          ['b', 'running'],
          ['c', 'waiting'],
        ],
      );
    });

    it('PostgreSQL: steps.insert is one call of step_insert_v2, and the record it builds from what it sent equals the stored one', {
      skip: target.dialect !== 'postgres' && 'PostgreSQL only',
    }, async () => {
      const { db, statements } = await openLogged(target);
      try {
        const store = createKyselyStore({ db, tablePrefix: ctx.prefix });
        const run = await runningRun(store);
        const hostile = 'k\u0000\ud800 "x"'.repeat(3);
        const steps = [
          { key: 'running', name: 'r', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'w1' },
          {
            key: hostile,
            name: hostile,
            kind: 'task',
            seq: 1,
            status: 'succeeded',
            maxAttempts: 2,
            output: { a: [1, 'b', null] },
            turn: 4,
            finishedAttempt: { status: 'succeeded', worker: 'w1', startedAt: T0 - 5, output: { a: [1, 'b', null] } },
          },
          {
            key: 'failed',
            name: 'f',
            kind: 'task',
            seq: 2,
            status: 'failed',
            maxAttempts: 1,
            error: { name: 'E', message: 'm' },
            turn: 5,
            finishedAttempt: { status: 'failed', worker: 'w1', startedAt: T0, error: { name: 'E', message: 'm' } },
          },
          { key: 'sleep', name: 's', kind: 'sleep', seq: 3, status: 'waiting', maxAttempts: 1, wakeAt: T0 + 9 },
          { key: 'child', name: 'c', kind: 'child', seq: 4, status: 'waiting', maxAttempts: 1, childRunId: 'child-1' },
          { key: 'queued', name: 'q', kind: 'task', seq: 5, status: 'pending', maxAttempts: 1, queued: true },
        ] as const;
        statements.length = 0;
        const inserted = [];
        for (const step of steps) inserted.push(await store.steps.insert(run.id, run.fence, step as never, T0 + 1));
        // The unfenced insert of a queued step worker.
        inserted.push(
          await store.steps.insert(run.id, null, { key: 'unfenced', name: 'u', kind: 'task', seq: 6, status: 'succeeded', maxAttempts: 1, output: 0 }, T0 + 2),
        );
        assert.deepEqual(
          statements.map((s) => s.startsWith(`select "${ctx.prefix}step_insert_v2"(`)),
          inserted.map(() => true),
          statements.join('\n'),
        );
        assert.deepEqual(
          inserted.map((i) => i.created),
          inserted.map(() => true),
        );
        assert.deepEqual(
          inserted.map((i) => i.step),
          await store.steps.load(run.id),
        );
        const again = await store.steps.insert(
          run.id,
          run.fence,
          { key: hostile, name: 'other', kind: 'task', seq: 9, status: 'running', maxAttempts: 1, worker: 'w2' },
          T0 + 3,
        );
        assert.deepEqual(again, { step: inserted[1]!.step, created: false });
        await rejects(
          store.steps.insert(run.id, run.fence + 1, { key: 'stale', name: 's', kind: 'task', seq: 9, status: 'running', maxAttempts: 1, worker: 'w' }, T0),
          'LEASE_LOST',
        );
        await rejects(
          store.steps.insert(id(), 1, { key: 'x', name: 'x', kind: 'task', seq: 0, status: 'running', maxAttempts: 1, worker: 'w' }, T0),
          'RUN_NOT_FOUND',
        );
        assert.deepEqual(
          (await store.history.list(run.id)).map((a) => [a.stepKey, a.attempt, a.status]),
          // In order of start: the finished attempts began before the running step's insert.
          [
            [hostile, 1, 'succeeded'],
            ['failed', 1, 'failed'],
            ['running', 1, 'running'],
          ],
        );
      } finally {
        await db.destroy();
      }
    });

    it('preparedStatements: PostgreSQL sends the step routines as named statements, with the same records; elsewhere INVALID_INPUT', async () => {
      if (target.dialect !== 'postgres') {
        assert.throws(
          () => createKyselyStore({ db: ctx.db, tablePrefix: ctx.prefix, preparedStatements: true }),
          (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
        );
        return;
      }
      assert.throws(
        () => createKyselyStore({ db: ctx.db, tablePrefix: ctx.prefix, preparedStatements: 'yes' as never }),
        (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
      );
      const write = async (store: WorkflowStore) => {
        const run = await runningRun(store);
        await store.steps.insert(run.id, run.fence, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 2, worker: 'w' }, T0);
        await store.steps.transition(
          run.id,
          run.fence,
          {
            key: 'a',
            from: { status: ['running'], attempt: 1 },
            to: { status: 'succeeded', output: { n: 1 } },
            endAttempt: { status: 'succeeded', output: { n: 1 } },
          },
          T0,
        );
        const b = await store.steps.insert(
          run.id,
          run.fence,
          {
            key: 'b',
            name: 'b',
            kind: 'task',
            seq: 1,
            status: 'succeeded',
            maxAttempts: 1,
            output: 'x',
            turn: 2,
            finishedAttempt: { status: 'succeeded', worker: 'w', startedAt: T0 },
          },
          T0,
        );
        const again = await store.steps.insert(
          run.id,
          run.fence,
          { key: 'b', name: 'b', kind: 'task', seq: 1, status: 'running', maxAttempts: 1, worker: 'w' },
          T0,
        );
        const strip = (r: { runId?: string }) => ({ ...r, runId: '' });
        return {
          b: { ...b, step: strip(b.step) },
          again: { ...again, step: strip(again.step) },
          steps: (await store.steps.load(run.id)).map(strip),
          history: (await store.history.list(run.id)).map(strip),
        };
      };
      const plain = await write(ctx.store);
      const { named, statements } = await ctx.db.connection().execute(async (conn) => {
        const named = await write(createKyselyStore({ db: conn, tablePrefix: ctx.prefix, preparedStatements: true }));
        const statements = (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by statement`.execute(conn))
          .rows;
        return { named, statements };
      });
      assert.deepEqual(named, plain);
      assert.deepEqual(
        statements.map((s) => [s.name.startsWith('cairn_'), /step_insert/.test(s.statement), /step_transition/.test(s.statement)]),
        [
          [true, true, false],
          [true, false, true],
        ],
      );
    });

    it('a deadlock victim is rolled back by the server and run again: both crossing transactions commit', {
      skip: target.dialect === 'sqlite' && 'SQLite writers queue on one lock; they cannot deadlock',
    }, async () => {
      // Two transactions lock two rows in opposite orders; on their first tries each waits for the
      // other to hold its first row, so the server must pick a victim (MySQL 1213, PostgreSQL
      // 40P01) and roll it back whole. The dialect's transaction runs the victim again.
      const table = sql.table(`${ctx.prefix}crossing`);
      await sql`create table ${table} (id integer primary key, v integer not null)`.execute(ctx.db);
      await sql`insert into ${table} (id, v) values (1, 0), (2, 0)`.execute(ctx.db);
      const dialect = dialectOf(target.dialect);
      const peers = await Promise.all([target.open(), target.open()]);
      const holding = [gate(), gate()];
      let tries = 0;
      const crossing = (db: AnyDb, mine: 0 | 1) =>
        dialect.transaction(db, async (trx) => {
          const first = tries++ < 2;
          await sql`update ${table} set v = v + 1 where id = ${mine + 1}`.execute(trx);
          if (first) {
            holding[mine]!.open();
            await holding[1 - mine]!.promise;
          }
          await sql`update ${table} set v = v + 1 where id = ${2 - mine}`.execute(trx);
        });
      try {
        await Promise.all([crossing(peers[0]!, 0), crossing(peers[1]!, 1)]);
        const { rows: found } = await sql<{ id: number; v: number }>`select id, v from ${table} order by id`.execute(ctx.db);
        assert.deepEqual(
          found.map((r) => [Number(r.id), Number(r.v)]),
          [
            [1, 2],
            [2, 2],
          ],
          'each transaction applied once',
        );
        assert.equal(tries, 3, 'one victim, run once more');
      } finally {
        for (const db of peers) await db.destroy();
        await sql`drop table ${table}`.execute(ctx.db);
      }
    });

    it('driver failures surface as STORE_ERROR with the driver error as cause', async () => {
      const broken = createKyselyStore({ db: ctx.db, tablePrefix: 'no_such_tables_' });
      await assert.rejects(broken.runs.get(id()), (error: unknown) => CairnError.is(error, 'STORE_ERROR') && (error as Error).cause !== undefined);
    });
  });
}
