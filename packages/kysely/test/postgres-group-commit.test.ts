import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kysely, PostgresDialect, sql, type LogEvent } from 'kysely';
import pg from 'pg';
import { CairnError } from '@cairn/core';
import type { Fence, NewStep, StepTransition, WorkflowStore } from '@cairn/core/backend';
import { mulberry32 } from '@cairn/conformance';
import { stopSharedServices } from '@cairn/conformance/services';
import { createKyselyStore, migrateToLatest } from '../src/index.js';
import { guardPostgresPool } from '../src/postgres.js';
import type { AnyDb } from './support/databases.js';
import { dropPrefix } from './support/harness.js';
import { LEASE, T0, id } from './support/store-case-kit.js';
import { freshPrefix, serverTarget } from './support/targets.js';

// Group commit of PostgreSQL step writes (decision 60), on a real server: concurrent step writes of
// several executions share statements (counted at the driver), each write still gets exactly the
// outcome it gets alone, a lone write goes out at once, and a statement that dies with its
// connection fails every write in it and leaves nothing half applied.

const target = await serverTarget('postgres');

/** Every statement a Kysely instance sent (its text), failed ones included; and the writes each batch carried. */
function statementLog() {
  const sent: string[] = [];
  const batchSizes: number[] = [];
  const log = (event: LogEvent) => {
    const q = event.query.sql as unknown;
    const text = typeof q === 'string' ? q : String((q as { text?: unknown }).text);
    sent.push(text);
    // A batch's first parameter is the array literal of its run ids (which hold no comma).
    if (isBatch(text)) batchSizes.push(String(event.query.parameters[0]).split(',').length);
  };
  return { sent, batchSizes, log };
}

const isBatch = (text: string) => text.includes('unnest(');

/**
 * The statements one line sends for `k` writes made in the same tick with the default limits
 * (decision 71): the first alone; the other k - 1 wait, and at the end of the turn (the first
 * still in flight) go out as floor((k - 1) / 8) statements side by side (at most 7 beside the
 * first), or as one when fewer than 16 wait.
 */
const lineStatements = (k: number): number => (k === 0 ? 0 : k === 1 ? 1 : 1 + Math.min(7, Math.max(1, Math.floor((k - 1) / 8))));
const isStepWrite = (text: string) => text.includes('step_insert_v2"') || text.includes('step_transition"');

const KINDS = ['finished', 'running', 'stale', 'terminal', 'missing', 'exists', 'advance', 'conflict', 'out-of-range'] as const;
type Kind = (typeof KINDS)[number];

/** One execution's write, described so it can be set up and sent alike on two stores. */
interface Plan {
  kind: Kind;
  runId: string;
  key: string;
}

/** Sets up what `plan` needs on `store`; returns the write to send and its fence. */
async function prepare(store: WorkflowStore, plan: Plan): Promise<() => Promise<unknown>> {
  const step = (over: Partial<NewStep> = {}): NewStep => ({
    key: plan.key,
    name: plan.key,
    kind: 'task',
    seq: 0,
    status: 'succeeded',
    maxAttempts: 1,
    output: { key: plan.key, text: 'q"u\\o\'te {a,b} NULL' },
    finishedAttempt: { status: 'succeeded', startedAt: T0, worker: 'w1', output: { key: plan.key, text: 'q"u\\o\'te {a,b} NULL' } },
    ...over,
  });
  if (plan.kind === 'missing') return () => store.steps.insert(plan.runId, 1, step(), T0);
  await store.runs.create({ id: plan.runId, workflow: 'wf', version: 'v1', input: null }, T0);
  const claimed = await store.runs.claim(plan.runId, 'w1', LEASE, T0);
  assert.ok(claimed);
  const fence: Fence = claimed.fence;
  const insert =
    (over: Partial<NewStep> = {}, f: Fence = fence) =>
    () =>
      store.steps.insert(plan.runId, f, step(over), T0 + 1);
  const running = { status: 'running', worker: 'w1', finishedAttempt: undefined, output: undefined } as const;
  const advance = (from: number): StepTransition => ({
    key: plan.key,
    from: { status: ['running'], attempt: from },
    to: { status: 'succeeded', output: { done: plan.key } },
    endAttempt: { status: 'succeeded', output: { done: plan.key } },
  });
  switch (plan.kind) {
    case 'finished':
      return insert();
    case 'running':
      return insert(running);
    case 'stale':
      // Another worker claimed the run after the lease lapsed: this execution's fence is stale.
      assert.ok(await store.runs.claim(plan.runId, 'w2', LEASE, T0 + LEASE + 1));
      return insert();
    case 'terminal':
      await store.runs.transition(plan.runId, fence, { from: ['running'], to: 'completed', output: null }, T0);
      return insert();
    case 'exists':
      await store.steps.insert(plan.runId, fence, step({ output: 'first' }), T0);
      return insert({ output: 'second' });
    case 'advance':
    case 'conflict':
      await store.steps.insert(plan.runId, fence, step(running), T0);
      return () => store.steps.transition(plan.runId, fence, advance(plan.kind === 'advance' ? 1 : 2), T0 + 1);
    case 'out-of-range':
      // A sequence number the INTEGER column cannot hold: the server refuses this write alone.
      return insert({ seq: 2 ** 31 });
  }
}

/** What a write came to: its value, or its error code. */
async function outcome(write: () => Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await write() };
  } catch (error) {
    return { error: CairnError.is(error) ? error.code : String(error) };
  }
}

async function openPg(log?: (event: LogEvent) => void, inFlight?: { now: number; most: number }): Promise<{ db: AnyDb; pool: pg.Pool }> {
  const db0 = await target.open();
  // The URL of the scratch database, read back from the test's own instance.
  const url = await urlOf(db0);
  await db0.destroy();
  const pool = guardPostgresPool(new pg.Pool({ connectionString: url, max: 10 }));
  // Counts the batch statements in flight at once, at the driver.
  if (inFlight) {
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
        const q = args[0] as unknown;
        if (!isBatch(typeof q === 'string' ? q : String((q as { text?: unknown }).text))) return query(...args);
        inFlight.now += 1;
        inFlight.most = Math.max(inFlight.most, inFlight.now);
        return query(...args).finally(() => {
          inFlight.now -= 1;
        });
      };
    });
  }
  return { db: new Kysely({ dialect: new PostgresDialect({ pool }), ...(log ? { log } : {}) }), pool };
}

async function urlOf(db: AnyDb): Promise<string> {
  const row = (
    await sql<{ db: string; port: number; user: string }>`select current_database() as db, inet_server_port() as port, current_user as user`.execute(db)
  ).rows[0];
  assert.ok(row);
  return `postgres://${row.user}@127.0.0.1:${row.port}/${row.db}`;
}

describe('PostgreSQL group commit of step writes', { skip: target.skip }, () => {
  let admin: AnyDb;
  const prefixes: string[] = [];

  before(async () => {
    await target.setup();
    admin = await target.open();
  });
  after(async () => {
    for (const p of prefixes) await dropPrefix(admin, p);
    await admin.destroy();
    await target.teardown();
    await stopSharedServices();
  });

  async function freshStore(db: AnyDb, options: { groupCommit?: boolean; preparedStatements?: boolean; groupCommitStatements?: number } = {}) {
    const prefix = freshPrefix();
    prefixes.push(prefix);
    await migrateToLatest(admin, { tablePrefix: prefix });
    return Object.assign(createKyselyStore({ db, tablePrefix: prefix, ...options }), { prefix });
  }

  /** A store on a fresh prefix over a pool of its own, and every statement that pool sent. */
  async function withStore(
    fn: (store: Awaited<ReturnType<typeof freshStore>>, sent: string[], inFlight: { now: number; most: number }, batchSizes: number[]) => Promise<void>,
    options: { groupCommitStatements?: number } = {},
  ) {
    const log = statementLog();
    const inFlight = { now: 0, most: 0 };
    const { db } = await openPg(log.log, inFlight);
    try {
      await fn(await freshStore(db, options), log.sent, inFlight, log.batchSizes);
    } finally {
      await db.destroy();
    }
  }

  it('concurrent step writes of many executions: fewer statements than writes, and each gets exactly the outcome it gets alone (generated; seed printed)', async () => {
    const seeds = Number(process.env.CAIRN_GROUP_COMMIT_SEEDS ?? 12);
    for (let s = 1; s <= seeds; s++) {
      const seed = 1000 + s;
      const rnd = mulberry32(seed);
      const log = statementLog();
      const { db } = await openPg(log.log);
      const ref = await openPg();
      try {
        const grouped = await freshStore(db, { preparedStatements: s % 2 === 0 });
        const alone = await freshStore(ref.db, { groupCommit: false });
        const n = 2 + Math.floor(rnd() * 24);
        const plans: Plan[] = Array.from({ length: n }, (_, i) => ({
          kind: KINDS[Math.floor(rnd() * KINDS.length)] as Kind,
          runId: `r${Math.floor(rnd() * 1e6)}-${i}`,
          key: `k${i}`,
        }));
        const writes = await Promise.all(plans.map((p) => prepare(grouped, p)));
        const reference = await Promise.all(plans.map((p) => prepare(alone, p)));
        const before = log.sent.length;
        // Every execution has its write ready in the same tick.
        const got = await Promise.all(writes.map((w) => outcome(w)));
        const sent = log.sent.slice(before).filter(isStepWrite);
        const want: unknown[] = [];
        for (const w of reference) want.push(await outcome(w));
        const context = `seed ${seed}: ${plans.map((p) => p.kind).join(', ')}`;
        assert.deepEqual(got, want, context);
        for (const p of plans) assert.deepEqual(await grouped.steps.load(p.runId), await alone.steps.load(p.runId), `${context}: steps of ${p.kind}`);
        for (const p of plans) assert.deepEqual(await grouped.history.list(p.runId), await alone.history.list(p.runId), `${context}: attempts of ${p.kind}`);
        const inserts = plans.filter((p) => p.kind !== 'advance' && p.kind !== 'conflict').length;
        const refused = plans.some((p) => p.kind === 'out-of-range');
        // One line per kind of write: its first write goes out alone, the rest together — as one
        // statement, or as statements of at least 8 writes each side by side (decision 71) — or,
        // when the server refused the statement for one write's data, again one by one.
        if (!refused) {
          const lines = lineStatements(inserts) + lineStatements(n - inserts);
          assert.equal(sent.length, lines, `${context}: statements ${JSON.stringify(sent.map((t) => (isBatch(t) ? 'batch' : 'one')))}`);
          if (n >= 4) assert.ok(sent.length < n, `${context}: ${sent.length} statements for ${n} writes`);
        }
      } finally {
        await db.destroy();
        await ref.db.destroy();
      }
    }
  });

  it('eight executions writing at once: two statements (the first alone, seven together), all eight steps stored once', () =>
    withStore(async (store, log) => {
      const plans = Array.from({ length: 8 }, (_, i): Plan => ({ kind: 'finished', runId: id(), key: `k${i}` }));
      const writes = await Promise.all(plans.map((p) => prepare(store, p)));
      const before = log.length;
      const results = (await Promise.all(writes.map((w) => w()))) as { created: boolean }[];
      const sent = log.slice(before).filter(isStepWrite);
      assert.deepEqual(
        sent.map((t) => (isBatch(t) ? 'batch' : 'one')),
        ['one', 'batch'],
      );
      assert.deepEqual(
        results.map((r) => r.created),
        Array(8).fill(true),
      );
      for (const p of plans) assert.equal((await store.steps.load(p.runId)).length, 1);
    }));

  for (const [statements, want] of [
    [undefined, { batches: [10, 10, 10, 9], most: 4 }],
    [1, { batches: [39], most: 1 }],
  ] as const) {
    it(`forty executions writing at once, groupCommitStatements ${statements ?? '8 (default)'}: the first alone, then ${want.batches.length} statement(s) of ${want.batches.join(', ')} writes, at most ${want.most} in flight at once; all forty steps stored once`, () =>
      withStore(
        async (store, log, inFlight, batchSizes) => {
          const plans = Array.from({ length: 40 }, (_, i): Plan => ({ kind: 'finished', runId: id(), key: `k${i}` }));
          const writes = await Promise.all(plans.map((p) => prepare(store, p)));
          const before = log.length;
          const results = (await Promise.all(writes.map((w) => w()))) as { created: boolean }[];
          const sent = log.slice(before).filter(isStepWrite);
          assert.equal(sent.filter((t) => !isBatch(t)).length, 1, 'one write alone');
          assert.equal(sent.filter(isBatch).length, want.batches.length);
          // Logged as they complete: compared largest first.
          assert.deepEqual(
            [...batchSizes].sort((a, b) => b - a),
            want.batches,
            'writes per batch statement',
          );
          assert.equal(inFlight.most, want.most, 'batch statements in flight at once');
          assert.deepEqual(
            results.map((r) => r.created),
            Array(40).fill(true),
          );
          for (const p of plans) assert.equal((await store.steps.load(p.runId)).length, 1);
        },
        statements === undefined ? {} : { groupCommitStatements: statements },
      ));
  }

  it('a lone write is not held back: sequential writes are one single call each, never a batch', () =>
    withStore(async (store, log) => {
      const plans = Array.from({ length: 6 }, (_, i): Plan => ({ kind: i % 2 === 0 ? 'finished' : 'advance', runId: id(), key: `k${i}` }));
      const writes = await Promise.all(plans.map((p) => prepare(store, p)));
      const before = log.length;
      for (const w of writes) await w();
      const sent = log.slice(before).filter(isStepWrite);
      assert.equal(sent.length, writes.length);
      assert.deepEqual(sent.filter(isBatch), [], 'no write waited for company');
    }));

  it('a batch whose connection is killed mid-statement fails every write in it with STORE_ERROR; nothing of it is applied, and sending them again writes each step once', () =>
    withStore(async (store) => {
      const plans = Array.from(
        { length: 6 },
        (_, i): Plan => ({ kind: i === 0 ? 'finished' : i % 2 ? 'running' : 'finished', runId: `run-${i}`, key: `k${i}` }),
      );
      const writes = await Promise.all(plans.map((p) => prepare(store, p)));
      const { db: locker } = await openPg();
      try {
        await locker.connection().execute(async (conn) => {
          await sql`begin`.execute(conn);
          // The last run's row locked: the batch (run ids in order) waits there, its earlier calls done.
          await sql`select id from ${sql.table(`${store.prefix}runs`)} where id = ${'run-5'} for update`.execute(conn);
          const pending = writes.map((w) => outcome(w));
          // Wait until the batch waits for the lock, then end its connection.
          let pid: number | undefined;
          for (let i = 0; i < 500 && pid === undefined; i++) {
            const found = await sql<{
              pid: number;
            }>`select pid from pg_stat_activity where query like '%unnest(%' and wait_event_type = 'Lock' and datname = current_database()`.execute(admin);
            pid = found.rows[0]?.pid;
            if (pid === undefined) await new Promise((r) => setTimeout(r, 10));
          }
          assert.ok(pid !== undefined, 'the batch never waited for the lock');
          await sql`select pg_terminate_backend(${pid})`.execute(admin);
          const got = await Promise.all(pending);
          await sql`rollback`.execute(conn);
          // The first write went out alone before the lock mattered; the five of the batch failed.
          assert.deepEqual(got[0], { ok: (got[0] as { ok: unknown }).ok });
          assert.deepEqual(got.slice(1), Array(5).fill({ error: 'STORE_ERROR' }));
        });
      } finally {
        await locker.destroy();
      }
      // The pool may hand out the ended connection once more before it notices: a read that fails
      // on it with STORE_ERROR is what any caller would retry.
      for (let i = 0; i < 10; i++) {
        const read = await outcome(() => store.steps.load('none'));
        if (!('error' in (read as object))) break;
      }
      for (const p of plans.slice(1)) assert.deepEqual(await store.steps.load(p.runId), [], `${p.runId}: nothing of the killed batch applied`);
      // The executions retry (as a resumed run would): each step written once, then found.
      const again = (await Promise.all(writes.slice(1).map((w) => w()))) as { created: boolean }[];
      assert.deepEqual(
        again.map((r) => r.created),
        Array(5).fill(true),
      );
      const third = (await Promise.all(writes.map((w) => w()))) as { created: boolean }[];
      assert.deepEqual(
        third.map((r) => r.created),
        Array(6).fill(false),
      );
      for (const p of plans) {
        assert.equal((await store.steps.load(p.runId)).length, 1, `${p.runId}: one step`);
        assert.equal((await store.history.list(p.runId)).length, 1, `${p.runId}: one attempt`);
      }
    }));

  it('groupCommitStatements must be an integer from 1 to 64', async () => {
    for (const bad of [0, 65, 1.5, -1, Number.NaN, '8' as never]) {
      await assert.rejects(
        async () => createKyselyStore({ db: admin, groupCommitStatements: bad }),
        (error: unknown) => CairnError.is(error) && error.code === 'INVALID_INPUT',
        String(bad),
      );
    }
  });

  it('groupCommit must be a boolean', async () => {
    await assert.rejects(
      async () => createKyselyStore({ db: admin, groupCommit: 'yes' as never }),
      (error: unknown) => CairnError.is(error) && error.code === 'INVALID_INPUT',
    );
  });
});
