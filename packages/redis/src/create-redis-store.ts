import { CairnError } from '@cairn/core';
import { withArgumentChecks, type WorkflowStore } from '@cairn/core/backend';

import { clientKeyPrefix, createCaller, type RedisClient } from './client.js';
import type { StoreContext } from './context.js';
import { createKeySpace } from './keys.js';
import { createRunStore } from './run-store.js';
import { scriptsFor } from './scripts/index.js';
import { createEventStore, createStateStore } from './state-event-store.js';
import { createStreamStore } from './stream-store.js';
import { createHistoryStore, createStepStore } from './step-store.js';
import { createVersionStore } from './version-store.js';
import { createScheduleStore } from './schedule-store.js';
import { createBulkStore } from './bulk-store.js';
import { createPauseStore } from './pause-store.js';
import { createSlotStore } from './slot-store.js';
import { redisDoctor } from './doctor.js';
import { createRedisSignals } from './redis-signals.js';

/** Options of `createRedisStore`. */
export interface RedisStoreOptions {
  /**
   * The ioredis client (`new Redis(...)` or `new Cluster(...)`). The store never quits it: it is
   * yours to close. It must not have ioredis' own `keyPrefix` option; use `prefix` instead. A client
   * with no `'error'` listener gets a silent one (see docs/backends/redis.md, "Outages").
   */
  redis: RedisClient;
  /** Start of every key the store writes (default `cairn`). Must not contain `{` or `}`. */
  prefix?: string;
  /**
   * How index maintenance is done (default: `true` for an ioredis `Cluster`, `false` otherwise).
   *
   * - `false`: every write is ONE script that updates the run and the global indexes (listing,
   *   due set, idempotency keys) together: exact indexes, one round trip. Needs every key on one
   *   server, so it does not work on Redis Cluster.
   * - `true`: a write is one script over the run's keys (one slot), then one script over the
   *   global keys (another slot). The run write is the truth; a crash between the two leaves an
   *   index entry stale, which `list` and `findDue` detect, skip and repair. See docs/backends/redis.md.
   */
  cluster?: boolean;
  /** Largest payload the store declares it accepts, in bytes of UTF-8 JSON (default 16 MiB). */
  maxPayloadBytes?: number;
  /** Called when an index write fails after its run write succeeded (cluster mode). Default: ignore. */
  onIndexError?: (err: unknown) => void;
}

/** The Redis store: `WorkflowStore` plus what it was built with. */
export interface RedisWorkflowStore extends WorkflowStore {
  /** The key prefix in use. */
  readonly prefix: string;
  /** Whether it runs in cluster (split index) mode. */
  readonly cluster: boolean;
}

/**
 * Creates the Redis store over the user's ioredis client. Every transition is one Lua script
 * (`EVALSHA`, re-sent by `EVAL` on `NOSCRIPT`) that checks status, attempt and fence and writes the
 * step with its attempt records; every key of a run shares one hash tag.
 */
export function createRedisStore(options: RedisStoreOptions): RedisWorkflowStore {
  const { redis } = options;
  if (!redis || typeof (redis as { call?: unknown }).call !== 'function') {
    throw new CairnError('INVALID_INPUT', 'createRedisStore needs an ioredis client as `redis`');
  }
  const keyPrefix = clientKeyPrefix(redis);
  if (keyPrefix !== undefined) {
    throw new CairnError(
      'INVALID_INPUT',
      `createRedisStore: the ioredis client has keyPrefix ${JSON.stringify(keyPrefix)}; pass it as the store's \`prefix\` option instead`,
    );
  }
  // Without an 'error' listener ioredis prints every failed reconnection ("[ioredis] Unhandled
  // error event") for the whole of an outage. The failed calls reject with STORE_ERROR anyway, and
  // the engine logs the outage once; a listener of the caller's own is left alone.
  if (redis.listenerCount('error') === 0) redis.on('error', () => {});
  const prefix = options.prefix ?? 'cairn';
  const cluster = options.cluster ?? redis.isCluster === true;
  if (redis.isCluster === true && !cluster) {
    throw new CairnError('INVALID_INPUT', 'createRedisStore: `cluster: false` needs a single server; a Cluster client needs cluster mode');
  }
  const mode = cluster ? 'split' : 'combined';
  const ctx: StoreContext = {
    caller: createCaller(redis),
    keys: createKeySpace(prefix),
    mode,
    scripts: scriptsFor(mode),
    onIndexError: options.onIndexError ?? (() => {}),
  };
  // Pub/sub wake-ups between processes (a duplicated subscriber connection, opened on first listen).
  const signals = createRedisSignals(redis, prefix);
  // Arguments of the wrong runtime type get INVALID_INPUT, never a TypeError from the key layout.
  return withArgumentChecks({
    name: 'redis',
    prefix,
    cluster,
    // insertFinished: a step recorded finished and its attempt 1 are written by one script.
    capabilities: { multiProcess: true, maxPayloadBytes: options.maxPayloadBytes ?? 16 * 1024 * 1024, insertFinished: true },
    runs: createRunStore(ctx),
    steps: createStepStore(ctx),
    state: createStateStore(ctx),
    streams: createStreamStore(ctx),
    events: createEventStore(ctx),
    versions: createVersionStore(ctx),
    history: createHistoryStore(ctx),
    schedules: createScheduleStore(ctx),
    pauses: createPauseStore(ctx),
    bulk: createBulkStore(ctx),
    slots: createSlotStore(ctx),
    doctor: redisDoctor(ctx),
    signals,
    async close() {
      // The client belongs to the caller; the store holds only the subscriber of its signals.
      await signals.close();
    },
  });
}
