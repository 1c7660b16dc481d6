import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createPostgresDatabase, parseRequire, startService, type RunningService } from '@cairn/conformance/services';
import { createPgBossQueue } from '@cairn/queue-pg-boss';
import { waitFor } from './support/wait-for.js';

// A server of this file's own, on local binaries: the test stops and starts it.
const env = { ...process.env };
delete env.CAIRN_TEST_POSTGRES_URL;
const service = await startService('postgres', { env, provider: 'local' });
const restartable = !service.skipped && service.halt !== undefined && service.resume !== undefined;
const skip = service.skipped ? service.reason : restartable ? false : 'the PostgreSQL server cannot be restarted';
if (skip && parseRequire(process.env.CAIRN_TEST_REQUIRE).has('postgres')) throw new Error(`postgres is required: ${skip}`);
after(async () => {
  if (!service.skipped) await service.stop();
});

// pg-boss keeps a slot's batch in its work-in-progress list (`getWipData().count`) until the batch
// ends without an error. When the database goes away between a handler's end and its job's
// settle (a server restart), the settle fails, and so does the fetch right after it: the slot is
// idle, sleeping its own poll interval, but still counts the job. The adapter's fetch loop woke
// only slots that counted none, and the slots' own poll is a 300 s backstop: a worker whose every
// slot was caught this way by a restart fetched nothing for five minutes (issue 18's outage test
// saw 7 of 30 runs complete in 55 s).
describe('@cairn/queue-pg-boss: a slot whose settle failed in an outage', { skip }, () => {
  it('fetches again once the server is back: the next job runs within the polling interval, not after the 300 s backstop', async () => {
    const running = service as RunningService;
    const dbUrl = await createPostgresDatabase(running.url);
    const errors: unknown[] = [];
    const queue = createPgBossQueue({ connectionString: dbUrl, schema: 'settle_jobs', pollingIntervalSeconds: 0.5, onError: (e) => void errors.push(e) });
    try {
      const handled: string[] = [];
      let halted: Promise<void> | undefined;
      await queue.work(
        'settle-q',
        async (job) => {
          const name = (job.payload as { name: string }).name;
          handled.push(name);
          // The server stops after the body ran and before pg-boss settles the job.
          if (name === 'first') await (halted = running.halt!());
        },
        { concurrency: 1 },
      );
      await queue.send('settle-q', { name: 'first' });
      await waitFor(() => handled.length === 1, 20_000, 'the first job to be handled');
      // Settle and fetch fail while the server is down.
      await waitFor(() => errors.length > 0, 20_000, 'an error while the server is down');
      await halted;
      await running.resume!();
      let sent = false;
      for (let i = 0; i < 100 && !sent; i++) {
        sent = await queue.send('settle-q', { name: 'second' }).then(
          () => true,
          async () => (await new Promise((r) => setTimeout(r, 100)), false),
        );
      }
      assert.ok(sent, 'the queue sends again once the server is back');
      await waitFor(() => handled.includes('second'), 20_000, 'the job sent after the restart');
    } finally {
      await queue.close().catch(() => undefined);
    }
  });
});
