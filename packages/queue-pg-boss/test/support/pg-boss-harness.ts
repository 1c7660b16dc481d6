import type { Queue } from '@cairn/core';
import type { QueueHarness } from '@cairn/conformance';
import { createPgBossQueue, type PgBossQueueOptions } from '@cairn/queue-pg-boss';
import { createDatabase, databaseUrl, dropDatabase } from './postgres.js';

/** The environment variable through which the child worker process finds the server. */
export const CHILD_URL_ENV = 'CAIRN_QUEUE_PG_BOSS_TEST_URL';

/** The schema every test queue uses: not pg-boss's default, so the option is exercised end to end. */
export const TEST_SCHEMA = 'cairn_jobs';

/**
 * Test timings: a fast poll, and heartbeats at pg-boss's minimum (10 s) with a 1 s supervisor, so
 * a killed worker's job comes back in about 11 s by the same mechanism production uses.
 */
export const TEST_TIMINGS = {
  pollingIntervalSeconds: 0.5,
  heartbeatSeconds: 10,
  expireInSeconds: 120,
  bossOptions: { superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 },
} satisfies PgBossQueueOptions;

/** Opens the test queue of `namespace` (a database name) on the server of `url`. */
export function openQueue(url: string, namespace: string): Queue {
  return createPgBossQueue({ connectionString: databaseUrl(url, namespace), schema: TEST_SCHEMA, ...TEST_TIMINGS, bossOptions: { ...TEST_TIMINGS.bossOptions } });
}

/**
 * The queue conformance harness of the pg-boss adapter: namespace = a fresh database per case,
 * with the pg-boss schema `cairn_jobs` in it; a second `createQueue` of one namespace is a second
 * `PgBoss` (its own pool), as another process would have. The worker-death case's child process
 * opens the same database through `child-queue.ts`.
 */
export function pgBossHarness(options: { url: string; source: string }): QueueHarness {
  const created = new Set<string>();
  return {
    name: 'pg-boss',
    source: options.source,
    async createQueue(namespace) {
      if (!created.has(namespace)) {
        await createDatabase(options.url, namespace);
        created.add(namespace);
      }
      return openQueue(options.url, namespace);
    },
    async destroyQueue(queue, namespace) {
      await queue.close();
      await dropDatabase(databaseUrl(options.url, namespace));
      created.delete(namespace);
    },
    childWorker: {
      module: new URL('./child-queue.ts', import.meta.url),
      env: () => ({ [CHILD_URL_ENV]: options.url }),
    },
    deliveryTimeoutMs: 15_000,
    redeliveryTimeoutMs: 60_000,
    settleMs: 2_500,
  };
}
