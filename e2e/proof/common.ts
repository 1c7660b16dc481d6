/**
 * What the proof's driver and workers share: the pairing config, the 10-step workflow, and how a
 * process opens its store, queue and engine (with the limited workflow of `limited-workflow.ts`).
 */
import { appendFileSync } from 'node:fs';
import { createEngine, defineWorkflow, type Engine } from '@cairn/core';
import type { Queue, QueueStrategy, WorkflowStore } from '@cairn/core/backend';
import { limitedWorkflow } from './limited-workflow.js';
import { bullmqQueue, ioredis, kysely, kyselyPostgres, kyselyStore, pg, pgBossQueue, redisStore } from './deps.js';

/** `postgres+store`: no broker — each process's own local queue, runs handed over through the store (LISTEN/NOTIFY). */
export type PairingName = 'postgres+pg-boss' | 'redis+bullmq' | 'postgres+store';

/** Everything a worker needs, passed as JSON in `CAIRN_PROOF_CONFIG`. */
export interface ProofConfig {
  pairing: PairingName;
  strategy: QueueStrategy;
  /** PostgreSQL database URL (postgres+pg-boss, postgres+store) or Redis URL (redis+bullmq). */
  url: string;
  /** Redis key prefix of the store and of BullMQ. */
  prefix: string;
  /** The file every step body appends `runId\tkey\n` to. */
  countsFile: string;
  /** The folder of the limited runs' ledgers, one file per worker process. */
  ledgerDir: string;
  /** How long the limited workflow's step body works, in ms. */
  limitedWorkMs: number;
}

export const STEPS = 10;
export const PG_BOSS_SCHEMA = 'cairn_proof_jobs';
export const WORKFLOW_NAME = 'proof-ten-steps';

/** Ten steps; the odd ones run on the step queue, the even ones inline in the orchestrator. */
export function proofWorkflow(countsFile: string) {
  return defineWorkflow(WORKFLOW_NAME, async (ctx, input: { n: number }) => {
    let total = 0;
    for (let i = 0; i < STEPS; i++) {
      total += await ctx.step(
        `s${i}`,
        async (step) => {
          appendFileSync(countsFile, `${step.runId}\t${step.key}\n`);
          // Optional work per step, so a small proof still runs long enough for its kills to land
          // mid-run on a fast queue (CAIRN_PROOF_STEP_MS, default 0).
          const pauseMs = Number(process.env.CAIRN_PROOF_STEP_MS ?? 0);
          if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
          return input.n + i;
        },
        { queued: i % 2 === 1 },
      );
    }
    return total;
  });
}

export interface Opened {
  store: WorkflowStore;
  /** The broker; absent for `postgres+store` (the engine owns a local queue). */
  queue?: Queue;
  engine: Engine;
  close(): Promise<void>;
}

/**
 * Short leases and timeouts, so a SIGKILLed worker's runs and steps are taken over quickly. The
 * lease is 4 s, not 2: renewed every third of it, a 2 s lease was lost by a live worker stalled
 * 1.3 s on a loaded 2-core machine, and its concurrency slot went to another run while its body
 * still ran (the designed overlap of a late holder, decision 37), which the limit's judge counts. A
 * limited run waiting for its slot leaves a delayed job for its fallback recheck
 * (`slotRecheckMs`); at the default 30 s those jobs stayed in the queue for about 20 s after the
 * last run ended, and the proof waits for the queue to drain.
 */
export const TIMINGS = { leaseMs: 4000, queuedStepTimeoutMs: 5000, dispatchTimeoutMs: 5000, startGraceMs: 3000, slotRecheckMs: 3000 };

const quietLogger = { warn: () => {}, error: () => {} };

export async function openStore(config: ProofConfig): Promise<{ store: WorkflowStore; close(): Promise<void>; raw: unknown }> {
  if (config.pairing === 'postgres+pg-boss' || config.pairing === 'postgres+store') {
    const { Kysely, PostgresDialect } = await kysely();
    const { default: pgm } = await pg();
    const pool = new pgm.Pool({ connectionString: config.url, max: 5 });
    pool.on('error', () => {});
    const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
    const { createKyselyStore } = await kyselyStore();
    // Without a broker the store hands runs between processes: LISTEN/NOTIFY wake-ups.
    const { createPostgresSignals } = await kyselyPostgres();
    const signals = config.pairing === 'postgres+store' ? { signals: createPostgresSignals({ db, connection: config.url }) } : {};
    const store = createKyselyStore({ db, dialect: 'postgres', ...signals });
    return {
      store,
      close: async () => {
        await store.close();
        await db.destroy();
      },
      raw: db,
    };
  }
  const { Redis } = await ioredis();
  const client = new Redis(config.url, { maxRetriesPerRequest: 3 });
  const { createRedisStore } = await redisStore();
  return { store: createRedisStore({ redis: client, prefix: config.prefix }), close: async () => void (await client.quit()), raw: client };
}

export async function openQueue(config: ProofConfig): Promise<Queue> {
  if (config.pairing === 'postgres+pg-boss') {
    const { createPgBossQueue } = await pgBossQueue();
    return createPgBossQueue({
      connectionString: config.url,
      schema: PG_BOSS_SCHEMA,
      pollingIntervalSeconds: 0.5,
      heartbeatSeconds: 10, // pg-boss's minimum: a dead worker's job is back in about 11 s
      expireInSeconds: 120,
      bossOptions: { superviseIntervalSeconds: 1, monitorIntervalSeconds: 1, max: 5 },
      onError: () => {},
    });
  }
  const url = new URL(config.url);
  const { createBullMQQueue } = await bullmqQueue();
  return createBullMQQueue({
    connection: { host: url.hostname, port: Number(url.port) || 6379 },
    prefix: `${config.prefix}bull`,
    lockDurationMs: 3000,
    stalledIntervalMs: 1000,
    onError: () => {},
  });
}

export async function openEngine(config: ProofConfig, workerId: string): Promise<Opened> {
  const s = await openStore(config);
  // No broker: the engine's own local queue (decision 34).
  const queue = config.pairing === 'postgres+store' ? undefined : await openQueue(config);
  const engine = createEngine({
    store: s.store,
    ...(queue ? { queue } : {}),
    workflows: [proofWorkflow(config.countsFile), limitedWorkflow(config.ledgerDir, config.limitedWorkMs)],
    workerId,
    queueStrategy: config.strategy,
    timings: TIMINGS,
    recoveryIntervalMs: 500,
    logger: quietLogger,
  });
  return {
    store: s.store,
    queue,
    engine,
    async close() {
      await engine.stop().catch(() => {});
      await queue?.close().catch(() => {});
      await s.close().catch(() => {});
    },
  };
}
