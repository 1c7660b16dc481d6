import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Queue } from '@cairn/core/backend';
import { stopSharedServices } from '@cairn/conformance/services';
import { createPgBossQueue } from '@cairn/queue-pg-boss';
import { countingDb, type CountingDbHandle } from './support/counting-db.js';
import { createDatabase, dropDatabase, providePostgres } from './support/postgres.js';
import { sleep, waitFor } from './support/wait-for.js';

const server = await providePostgres();

/**
 * What a statement is for: the job's own (fetch, completion), the adapter's idle probe, or
 * anything else a process sends on its own (pg-boss's maintenance, cron and flow timers).
 */
function kind(text: string): 'fetch' | 'complete' | 'probe' | 'other' {
  if (/WITH\s+next\s+AS/i.test(text)) return 'fetch';
  if (/json_to_recordset/i.test(text)) return 'complete';
  if (/unnest\(\$1::text\[\]\)/i.test(text)) return 'probe';
  return 'other';
}

describe('statements of a pg-boss fleet', { skip: 'skip' in server ? `no PostgreSQL: ${server.skip}` : false }, () => {
  let dbUrl = '';
  const cleanups: Array<() => Promise<unknown>> = [];

  before(async () => {
    if ('url' in server) dbUrl = await createDatabase(server.url);
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    if (dbUrl) await dropDatabase(dbUrl);
    await stopSharedServices();
  });

  const open = (options: Parameters<typeof createPgBossQueue>[0]): Queue => {
    const queue = createPgBossQueue({ connectionString: dbUrl, ...options });
    cleanups.push(() => queue.close());
    return queue;
  };

  it('a process adds no statement of its own but the idle probe: no cron worker, no cron or flow claims', async () => {
    // Four processes (a PgBoss each) serving one queue, then 20 jobs one after another and a few
    // idle seconds. Every statement a process sends on a timer is paid again by each process added
    // (decision 47): pg-boss's cron worker (a fetch every 5 s), its cron claim and its flow
    // resolver's claim (every 5 s), although Cairn schedules nothing in pg-boss and sends no flows.
    const processes = 4;
    const jobs = 20;
    const dbs: CountingDbHandle[] = Array.from({ length: processes }, () => countingDb(dbUrl));
    for (const counting of dbs) cleanups.push(() => counting.close());
    let done = 0;
    for (const counting of dbs) {
      const worker = open({ schema: 'fleet', pollingIntervalSeconds: 1, bossOptions: { db: counting.db } });
      await worker.work('fleet', async () => void done++, { concurrency: 4 });
    }
    const sender = open({ schema: 'fleet', pollingIntervalSeconds: 1 });
    await sleep(500); // start-up: every slot makes its first fetch
    for (const counting of dbs) counting.reset();
    for (let i = 0; i < jobs; i++) {
      await sender.send('fleet', { i });
      await waitFor(() => done === i + 1, 20_000, `job ${i}`);
    }
    await sleep(6000); // longer than pg-boss's 5 s cron-worker and flow intervals
    const statements = dbs.flatMap((counting) => counting.statements());
    const byKind = { fetch: 0, complete: 0, probe: 0, other: 0 };
    for (const text of statements) byKind[kind(text)]++;
    const others = statements.filter((text) => kind(text) === 'other').map((text) => text.replace(/\s+/g, ' ').slice(0, 80));
    assert.equal(byKind.complete, jobs, `one completion per job: ${JSON.stringify(byKind)}`);
    assert.deepEqual(others, [], `statements besides fetches, completions and the idle probe: ${JSON.stringify(byKind)}`);
    // Every fetch is the job's or a wake's, never a timer's: at most the fetch that takes the job,
    // the slot it wakes, and one per other process woken by the same NOTIFY.
    assert.ok(byKind.fetch <= jobs * (processes + 1), `${byKind.fetch} fetches for ${jobs} jobs over ${processes} processes`);
  });
});
