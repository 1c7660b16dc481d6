import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Queue } from '@cairn/core/backend';
import { deleteRedisPrefix, stopSharedServices } from '@cairn/conformance/services';
import { createBullMQQueue } from '@cairn/queue-bullmq';
import { redisOptions } from './support/bullmq-harness.js';
import { openCommandLog } from './support/command-log.js';
import { provideRedis } from './support/redis.js';
import { sleep, waitFor } from './support/wait-for.js';

const server = await provideRedis();

// BullMQ's default `drainDelay`: an idle worker's blocking wait ends after 5 s and it looks again.
const IDLE_WAIT_MS = 5_000;
const JOBS = 20;

// Issue 18 / decision 46: Redis commands per job must not grow with the number of worker
// processes. Each process here is an adapter of its own (its own connections and workers), as in
// the bench's worker-process scenario; jobs arrive one at a time, so every worker is idle and
// blocked on the queue's marker when a job comes, which is how each of 8 processes sees a
// batch that 1 process would take back to back.
describe('fetches per job as worker processes are added', { skip: 'skip' in server ? `no Redis: ${server.skip}` : false }, () => {
  const url = 'url' in server ? server.url : '';
  after(() => stopSharedServices());

  for (const processes of [1, 4]) {
    it(`${processes} process(es): one fetch per job; a wake that finds no job ready costs one EXISTS, not a fetch`, async () => {
      const prefix = `qbf${process.pid}_${processes}`;
      const queues: Queue[] = [];
      const log = await openCommandLog(url, prefix);
      try {
        let handled = 0;
        for (let i = 0; i < processes; i++) {
          const queue = createBullMQQueue({ connection: redisOptions(url), prefix });
          queues.push(queue);
          await queue.work('jobs', async () => void handled++, { concurrency: 4 });
        }
        const started = Date.now();
        for (let i = 0; i < JOBS; i++) {
          await queues[i % processes]!.send('jobs', { i });
          await waitFor(() => handled === i + 1, 10_000, `job ${i}`);
        }
        // The look the last job's fetch leaves behind (its marker) is counted too.
        await sleep(200);
        const elapsed = Date.now() - started;
        // Time-driven, not per job: each worker's first wait, and one per idle wait that ran out.
        const idleWaits = processes * (1 + Math.ceil(elapsed / IDLE_WAIT_MS));
        // Every fetch (BullMQ's moveToActive script, or the next job fetched by a completion) runs
        // exactly one RPOPLPUSH on the queue's wait list.
        const fetches = log.count('rpoplpush');
        const wakes = log.count('bzpopmin');
        // The adapter's probe names the wait list (BullMQ's scripts also run EXISTS, on other keys).
        const probes = log.count('exists', (args) => args.includes(`${prefix}:jobs:wait`));
        assert.equal(handled, JOBS);
        // A worker fetches only when a job is ready (or delayed); each worker may race once at start.
        assert.ok(fetches <= JOBS + processes, `${fetches} fetches for ${JOBS} jobs (${(fetches / JOBS).toFixed(2)} per job); at most 1 per job`);
        assert.ok(
          wakes <= 2 * JOBS + idleWaits,
          `${wakes} blocking waits for ${JOBS} jobs; at most 2 per job (the job's marker, and the one its fetch leaves)`,
        );
        assert.ok(probes <= wakes + processes, `${probes} EXISTS for ${wakes} blocking waits; at most one each`);
      } finally {
        for (const queue of queues) await queue.close();
        await log.close();
        await deleteRedisPrefix(url, `${prefix}:`);
      }
    });
  }
});
