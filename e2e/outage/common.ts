/**
 * What the outage test's driver and its worker processes share: the config, the workflow, and how a
 * process opens its store, queue and engine for each backend. Each backend uses the setup
 * docs/backends recommends for surviving a restart.
 */
import { appendFileSync } from 'node:fs';
import { createEngine, createLocalQueue, defineWorkflow, type Engine, type EngineLogger } from '@cairn/core';
import type { Queue, WorkflowStore } from '@cairn/core/backend';
import { bullmqQueue, kyselyMysql, kyselyPostgres, pgBossQueue, redisStore } from '../proof/deps.js';

export type OutageBackend = 'postgres' | 'mysql' | 'redis';

/** Everything a worker needs, passed as JSON in `CAIRN_OUTAGE_CONFIG`. */
export interface OutageConfig {
  backend: OutageBackend;
  /** Database URL (PostgreSQL, MariaDB) or Redis URL. */
  url: string;
  /** Redis key prefix of the store and of BullMQ. */
  prefix: string;
  /** Every step body appends `runId\tkey\n` here when it succeeds. */
  countsFile: string;
}

export const STEPS = 4;
export const WORKFLOW_NAME = 'outage-steps';
export const PG_BOSS_SCHEMA = 'cairn_outage_jobs';
/** Each step body's work: long enough that the restart lands while bodies are running. */
export const STEP_MS = 150;

/** Four steps; the odd ones go through the step queue, the even ones run inline. */
export function outageWorkflow(countsFile: string) {
  return defineWorkflow(WORKFLOW_NAME, async (ctx, input: { n: number }) => {
    let total = 0;
    for (let i = 0; i < STEPS; i++) {
      total += await ctx.step(
        `s${i}`,
        async (step) => {
          await new Promise((resolve) => setTimeout(resolve, STEP_MS));
          // When it succeeded: its result's write may be lost if that falls in the outage.
          appendFileSync(countsFile, `${step.runId}\t${step.key}\t${Date.now()}\n`);
          return input.n + i;
        },
        { queued: i % 2 === 1 },
      );
    }
    return total;
  });
}

/** The output a run of input `n` must return. */
export const expectedOutput = (n: number): number => STEPS * n + (STEPS * (STEPS - 1)) / 2;

/** Short leases and timeouts, so work interrupted by the outage is taken over quickly. */
export const TIMINGS = { leaseMs: 2000, queuedStepTimeoutMs: 5000, dispatchTimeoutMs: 3000, startGraceMs: 1000 };
export const RECOVERY_INTERVAL_MS = 300;

export interface Opened {
  store: WorkflowStore;
  queue: Queue;
  engine: Engine;
  close(): Promise<void>;
}

/** The store, opened the way the backend's docs recommend for surviving a restart. */
export async function openStore(config: OutageConfig): Promise<{ store: WorkflowStore; close(): Promise<void> }> {
  let store: WorkflowStore;
  if (config.backend === 'postgres') {
    const { openPostgresStore } = await kyselyPostgres();
    store = await openPostgresStore({ connectionString: config.url, max: 5 }, { migrate: false });
  } else if (config.backend === 'mysql') {
    const { openMysqlStore } = await kyselyMysql();
    store = await openMysqlStore({ uri: config.url, connectionLimit: 5 }, { migrate: false });
  } else {
    const { openRedisStore } = await redisStore();
    store = openRedisStore(config.url, { prefix: config.prefix });
  }
  return { store, close: () => store.close() };
}

/** PostgreSQL: pg-boss in the same database; Redis: BullMQ; MariaDB: the local queue (runs move between processes through recovery). */
export async function openQueue(config: OutageConfig): Promise<Queue> {
  if (config.backend === 'postgres') {
    const { createPgBossQueue } = await pgBossQueue();
    return createPgBossQueue({
      connectionString: config.url,
      schema: PG_BOSS_SCHEMA,
      pollingIntervalSeconds: 0.5,
      heartbeatSeconds: 10,
      expireInSeconds: 120,
      bossOptions: { superviseIntervalSeconds: 1, monitorIntervalSeconds: 1, max: 5 },
    });
  }
  if (config.backend === 'redis') {
    const url = new URL(config.url);
    const { createBullMQQueue } = await bullmqQueue();
    return createBullMQQueue({
      connection: { host: url.hostname, port: Number(url.port) || 6379 },
      prefix: `${config.prefix}bull`,
      lockDurationMs: 3000,
      stalledIntervalMs: 1000,
    });
  }
  return createLocalQueue();
}

/**
 * An engine over the backend's store and queue. `submitOnly` (the driver): a local queue instead,
 * so the driver holds no queue connection; the workers' recovery loops dispatch its runs.
 */
export async function openEngine(config: OutageConfig, workerId: string, o: { logger?: EngineLogger; submitOnly?: boolean } = {}): Promise<Opened> {
  const s = await openStore(config);
  const queue = o.submitOnly ? createLocalQueue() : await openQueue(config);
  const logger = o.logger;
  const engine = createEngine({
    store: s.store,
    queue,
    workflows: [outageWorkflow(config.countsFile)],
    workerId,
    timings: TIMINGS,
    recoveryIntervalMs: RECOVERY_INTERVAL_MS,
    ...(logger ? { logger } : {}),
  });
  return {
    store: s.store,
    queue,
    engine,
    async close() {
      await engine.stop({ graceMs: 5000 }).catch(() => {});
      await queue.close().catch(() => {});
      await s.close().catch(() => {});
    },
  };
}
