import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CompiledQuery, sql, type LogEvent, type RawBuilder } from 'kysely';
import { tagHash } from '../src/run-tags.js';
import { stopSharedServices } from '@cairn/conformance/services';
import { createKyselyStore, migrateToLatest, tableNames } from '../src/index.js';
import type { AnyDb } from './support/databases.js';
import { exerciseEveryMethod } from './support/exercise.js';
import { freshPrefix, serverTarget, sqliteTarget, type Target } from './support/targets.js';

const RUNS = 10_000;
const T0 = 1_750_000_000_000;

/** Bulk-loads RUNS runs (10% waiting and due, 10% running, the rest completed), 3 steps and attempts each, state and events, 2 tags each; RUNS schedules (10% due); RUNS slot rows and RUNS waiters. */
async function bulkLoad(db: AnyDb, prefix: string): Promise<void> {
  const t = tableNames(prefix);
  const series = sql`with recursive g(n) as (select 1 union all select n + 1 from g where n < ${sql.lit(RUNS)})`;
  await sql`${series} insert into ${sql.table(t.runs)} (id, workflow, version, input_json, status, lease_owner, lease_expires_at, fence, cancel_requested, wake_at, due_at, created_at, updated_at)
    select 'bulk-' || n, 'wf' || (n % 20), 'v1', '{}',
      case when n % 10 = 0 then 'waiting' when n % 10 = 1 then 'running' else 'completed' end,
      case when n % 10 = 1 then 'w' else null end, case when n % 10 = 1 then ${sql.lit(T0)} + n + 30000 else null end, 1, 0,
      case when n % 10 = 0 then ${sql.lit(T0)} + n else null end,
      case when n % 10 = 0 then ${sql.lit(T0)} + n when n % 10 = 1 then ${sql.lit(T0)} + n + 30000 else null end,
      ${sql.lit(T0)} + n, ${sql.lit(T0)} + n from g`.execute(db);
  const three = sql`(select 0 as k union all select 1 union all select 2) k`;
  await sql`insert into ${sql.table(t.steps)} (run_id, key_hash, step_key, name, kind, seq, status, attempt, max_attempts, queued, output_json, created_at, updated_at)
    select r.id, 'h' || k.k, 's' || k.k, 's', 'task', k.k, 'succeeded', 1, 3, 0, '1', r.created_at, r.created_at from ${sql.table(t.runs)} r cross join ${three}`.execute(
    db,
  );
  await sql`insert into ${sql.table(t.attempts)} (run_id, key_hash, attempt, step_key, step_seq, status, worker, started_at, ended_at)
    select run_id, key_hash, 1, step_key, seq, 'succeeded', 'w', created_at, created_at from ${sql.table(t.steps)}`.execute(db);
  await sql`insert into ${sql.table(t.state)} (run_id, key_hash, state_key, value_json, updated_at)
    select run_id, key_hash, step_key, '1', created_at from ${sql.table(t.steps)}`.execute(db);
  await sql`insert into ${sql.table(t.events)} (run_id, name_hash, seq, name, payload_json, delivered_at, idempotency_hash, idempotency_key)
    select run_id, key_hash, 1, step_key, '1', created_at, key_hash, step_key from ${sql.table(t.steps)}`.execute(db);
  // Schedules: 10% due (spread over time), the rest paused (no due time).
  await sql`${series} insert into ${sql.table(t.schedules)} (name, revision, due_at, record_json)
    select 'sched-' || n, 1, case when n % 10 = 0 then ${sql.lit(T0)} + n * 60000 else null end, '{}' from g`.execute(db);
  // Slots: 1,000 keys of 10 slots (half held), and 100 keys with 100 waiters each.
  await sql`${series} insert into ${sql.table(t.slots)} (key_hash, idx, holder, expires_at)
    select 'k' || (n % 1000), n / 1000, case when n % 2 = 0 then 'h' || n else null end, ${sql.lit(T0)} + n from g`.execute(db);
  await sql`${series} insert into ${sql.table(t.slot_waiters)} (key_hash, holder_hash, holder, priority, queued_at, expires_at)
    select 'k' || (n % 100), 'w' || n, 'w' || n, n % 7, ${sql.lit(T0)} + n, ${sql.lit(T0)} + 60000 + n from g`.execute(db);
  // Tags: every run has a customer (10 runs each) and a plan (a third of all runs each).
  const tagRows: RawBuilder<unknown>[] = [];
  for (let n = 1; n <= RUNS; n += 1) {
    for (const [key, value] of [
      ['customer', `c-${n % 1000}`],
      ['plan', `p${n % 3}`],
    ] as const) {
      tagRows.push(sql`(${`bulk-${n}`}, ${tagHash(key, value)}, ${key}, ${value}, ${T0 + n})`);
    }
  }
  for (let i = 0; i < tagRows.length; i += 500) {
    await sql`insert into ${sql.table(t.run_tags)} (run_id, tag_hash, tag_key, tag_value, run_created_at) values ${sql.join(tagRows.slice(i, i + 500))}`.execute(
      db,
    );
  }
  await sql`analyze`.execute(db);
}

/** Plan lines that read a whole large table. */
function fullScans(dialect: string, plan: string[], tables: string[]): string[] {
  if (dialect === 'postgres') return plan.filter((line) => tables.some((table) => new RegExp(`Seq Scan on ${table}\\b`).test(line)));
  // SQLite: `SCAN x` without an index reads the whole table; `SEARCH ... USING INDEX` is a range.
  // Only a large table counts: `SCAN s0` reads a subquery's rows (a page of a listing's UNION ALL).
  return plan.filter(
    (line) => tables.includes(/^SCAN (\S+)/.exec(line)?.[1] ?? '') && !/USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY|CONSTANT ROW/.test(line),
  );
}

function explainCases(target: Target): void {
  describe(`EXPLAIN of every store query on ${target.dialect} over ${RUNS} runs`, {
    skip: target.skip === undefined ? false : `no ${target.dialect} server: ${target.skip}`,
  }, () => {
    it('no query of any store method scans a large table', async () => {
      await target.setup();
      const captured = new Map<string, readonly unknown[]>();
      let capturing = false;
      const log = (event: LogEvent) => {
        if (capturing && event.level === 'query' && !/^\s*(begin|commit|rollback|start transaction)/i.test(event.query.sql)) {
          captured.set(event.query.sql, event.query.parameters);
        }
      };
      const db = await target.open(log);
      const prefix = freshPrefix();
      try {
        await migrateToLatest(db, { tablePrefix: prefix });
        await bulkLoad(db, prefix);
        capturing = true;
        await exerciseEveryMethod(createKyselyStore({ db, tablePrefix: prefix }));
        capturing = false;
        assert.ok(captured.size >= 25, `captured ${captured.size} distinct statements`);
        const large = ['runs', 'steps', 'attempts', 'state', 'events', 'schedules', 'slots', 'slot_waiters', 'run_tags'].map((table) => `${prefix}${table}`);
        const offenders: string[] = [];
        const planOf = async (text: string, parameters: readonly unknown[]) => {
          const explain = target.dialect === 'postgres' ? `explain ${text}` : `explain query plan ${text}`;
          const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(explain, [...parameters]));
          return rows.map((row) => String(row['QUERY PLAN'] ?? row['detail'] ?? JSON.stringify(row)).trim());
        };
        // The detector itself must see a full scan when there is one.
        const unindexed = await planOf(`select id from ${target.dialect === 'postgres' ? `"${prefix}runs"` : `${prefix}runs`} where input_json = 'x'`, []);
        assert.notDeepEqual(fullScans(target.dialect, unindexed, large), [], `an unindexed filter must be flagged: ${unindexed.join(' / ')}`);
        for (const [text, parameters] of captured) {
          const plan = await planOf(text, parameters);
          const scans = fullScans(target.dialect, plan, large);
          if (scans.length > 0) offenders.push(`${text.replace(/\s+/g, ' ').slice(0, 160)}\n    ${plan.join('\n    ')}`);
        }
        assert.deepEqual(offenders, [], `full scans:\n${offenders.join('\n')}`);
        console.log(`# ${target.dialect}: ${captured.size} distinct statements explained, none scans a large table`);
      } finally {
        await db.destroy();
        await target.teardown();
      }
    });
  });
}

explainCases(sqliteTarget());
explainCases(await serverTarget('postgres'));
after(() => stopSharedServices());
