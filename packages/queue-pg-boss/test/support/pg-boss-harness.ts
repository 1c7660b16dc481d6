import type { Queue } from '@cairn/core/backend';
import type { QueueHarness } from '@cairn/conformance';
import { createPgBossQueue, type PgBossQueueOptions } from '@cairn/queue-pg-boss';
import { createDatabase, databaseUrl, dropDatabase } from './postgres.js';

/** The environment variable through which the child worker process finds the server. */
export const CHILD_URL_ENV = 'CAIRN_QUEUE_PG_BOSS_TEST_URL';
/** ...and which redelivery mechanism the parent's queue uses. */
export const CHILD_MODE_ENV = 'CAIRN_QUEUE_PG_BOSS_TEST_MODE';

/**
 * How a dead worker's job comes back: `heartbeat` (the default configuration: a lapsed heartbeat)
 * or `expiry` (heartbeats off: `expireInSeconds` runs out).
 */
export type RedeliveryMode = 'heartbeat' | 'expiry';

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

/** Heartbeats off, a 3 s expiry: the fallback mechanism, for the worker-death case. */
export const EXPIRY_TIMINGS = { ...TEST_TIMINGS, heartbeatSeconds: null, expireInSeconds: 3 } satisfies PgBossQueueOptions;

/** Opens the test queue of `namespace` (a database name) on the server of `url`. */
export function openQueue(url: string, namespace: string, mode: RedeliveryMode = 'heartbeat'): Queue {
  const timings = mode === 'heartbeat' ? TEST_TIMINGS : EXPIRY_TIMINGS;
  return createPgBossQueue({ connectionString: databaseUrl(url, namespace), schema: TEST_SCHEMA, ...timings, bossOptions: { ...timings.bossOptions } });
}

/**
 * The queue conformance harness of the pg-boss adapter: namespace = a fresh database per case,
 * with the pg-boss schema `cairn_jobs` in it; a second `createQueue` of one namespace is a second
 * `PgBoss` (its own pool), as another process would have. The worker-death case's child process
 * opens the same database through `child-queue.ts`.
 */
export function pgBossHarness(options: { url: string; source: string; mode?: RedeliveryMode }): QueueHarness {
  const created = new Set<string>();
  const mode = options.mode ?? 'heartbeat';
  return {
    name: mode === 'heartbeat' ? 'pg-boss' : 'pg-boss (expiry, no heartbeats)',
    source: options.source,
    async createQueue(namespace) {
      if (!created.has(namespace)) {
        await createDatabase(options.url, namespace);
        created.add(namespace);
      }
      return openQueue(options.url, namespace, mode);
    },
    async destroyQueue(queue, namespace) {
      await queue.close();
      await dropDatabase(databaseUrl(options.url, namespace));
      created.delete(namespace);
    },
    childWorker: {
      module: new URL('./child-queue.ts', import.meta.url),
      env: () => ({ [CHILD_URL_ENV]: options.url, [CHILD_MODE_ENV]: mode }),
    },
    deliveryTimeoutMs: 15_000,
    redeliveryTimeoutMs: 60_000,
    settleMs: 2_500,
  };
}
