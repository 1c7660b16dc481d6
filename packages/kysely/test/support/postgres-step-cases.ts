import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { CairnError } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { createKyselyStore } from '../../src/index.js';
import { T0, id, rejects, runningRun, openLogged, type StoreContext } from './store-case-kit.js';
import type { Target } from './targets.js';

/**
 * PostgreSQL's step write specifics: the asynchronous commit of a running step's start, the
 * step_insert_v2 call and the record built from what it sent, and named (prepared) statements.
 * Skipped elsewhere. Registered inside `storeCases`.
 */
export function postgresStepCases(target: Target, ctx: StoreContext): void {
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

  it('preparedStatements: a connection that lost its named statements, or holds one of their names already (a pooler in transaction mode), makes the store send unnamed ones from then on, with one warning', {
    skip: target.dialect !== 'postgres' && 'PostgreSQL only',
  }, async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === 'CairnWarning') warnings.push(warning);
    };
    process.on('warning', onWarning);
    const start = (store: WorkflowStore, run: { id: string; fence: number }, key: string, seq: number) =>
      store.steps.insert(run.id, run.fence, { key, name: key, kind: 'task', seq, status: 'running', maxAttempts: 1, worker: 'w' }, T0);
    const prepared = async (conn: typeof ctx.db) =>
      (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by name`.execute(conn)).rows;
    try {
      // Lost: the server forgot the statement behind the driver's back (a pooler sent the next call to
      // another server connection), so `pg` binds a name the server does not know (26000).
      const lost = await ctx.db.connection().execute(async (conn) => {
        const store = createKyselyStore({ db: conn, tablePrefix: ctx.prefix, preparedStatements: true });
        const run = await runningRun(store);
        await start(store, run, 'a', 0);
        const names = await prepared(conn);
        await sql`deallocate all`.execute(conn);
        // Two calls at once: both go out named before the first one's refusal comes back, so the
        // second is refused too, after the store already fell back, and must be sent again as well.
        const [b, c] = await Promise.all([start(store, run, 'b', 1), start(store, run, 'c', 2)]);
        return { names, b, c, after: await prepared(conn), keys: (await store.steps.load(run.id)).map((s) => s.key) };
      });
      assert.ok(lost.names.length > 0 && lost.names.every((n) => n.name.startsWith('cairn_')));
      assert.equal(lost.b.created, true);
      assert.equal(lost.c.created, true);
      assert.deepEqual(lost.after, [], 'no named statement is prepared again after the fallback');
      assert.deepEqual(lost.keys, ['a', 'b', 'c']);
      // Taken: the server connection already holds the statement (another client of the pooler
      // prepared it there), so parsing it on a client that has not fails (42P05). A new Kysely
      // instance: its `pg` client has parsed nothing yet.
      const fresh = await target.open();
      const taken = await fresh
        .connection()
        .execute(async (conn) => {
          for (const { name, statement } of lost.names) await sql.raw(`prepare "${name}" as ${statement}`).execute(conn);
          const store = createKyselyStore({ db: conn, tablePrefix: ctx.prefix, preparedStatements: true });
          const run = await runningRun(store);
          const a = await start(store, run, 'a', 0);
          return { a, keys: (await store.steps.load(run.id)).map((s) => s.key) };
        })
        .finally(() => fresh.destroy());
      assert.equal(taken.a.created, true);
      assert.deepEqual(taken.keys, ['a']);
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(warnings.length, 2, 'one warning per store that fell back');
      assert.match(warnings[0]!.message, /preparedStatements: false/);
    } finally {
      process.off('warning', onWarning);
    }
  });
}
