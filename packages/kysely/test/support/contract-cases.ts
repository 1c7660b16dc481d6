import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Json } from '@cairn/core';
import { CAIRN_MIGRATION_NAMES, cairnMigrations, createKyselyStore, detectDialect } from '../../src/index.js';
import { artefactsIn, dropPrefix } from './harness.js';
import { freshPrefix, type Target } from './targets.js';
import { T0, LEASE, id, rejects, runningRun, type StoreContext } from './store-case-kit.js';

/**
 * The store contract on a real database: dialect detection, the shipped migrations, racing creates and
 * claims over separate connections, fences, compare-and-set conflicts, wake times, outputs, hostile
 * keys, concurrent state writes and delete. Registered inside `storeCases`.
 */
export function contractCases(target: Target, ctx: StoreContext): void {
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
}
