import { withArgumentChecks, type StoreCapabilities, type WorkflowStore } from '@cairn/core/backend';

import type { Db } from 'mongodb';
import { createContext } from './context.js';
import type { ServerInfo } from './context.js';
import { guard } from './errors.js';
import { createEventStore } from './event-store.js';
import { createHistoryStore } from './history-store.js';
import { RUN_INDEXES, SCHEDULE_INDEXES, SLOT_WAITER_INDEXES, STREAM_ENTRY_INDEXES, VERSION_INDEXES } from './indexes.js';
import { createScheduleStore } from './schedule-store.js';
import { createStreamStore } from './stream-store.js';
import { createPauseStore } from './pause-store.js';
import { createBulkStore } from './bulk-store.js';
import { createSlotStore } from './slot-store.js';
import { mongoDoctor } from './doctor.js';
import { createRunStore } from './run-store.js';
import { createStateStore } from './state-store.js';
import { createStepStore } from './step-store.js';
import { createVersionStore } from './version-store.js';

/** Default `maxPayloadBytes`: 2 MiB (a whole run must fit one 16 MiB document). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 2 * 1024 * 1024;

/** Options of `createMongoStore`. */
export interface MongoStoreOptions {
  /** The database to use. The store never closes its client: you created it, you close it. */
  db: Db;
  /** Prefix of the store's collections (`<prefix>runs`, `<prefix>versions`, `<prefix>schedules`, `<prefix>slots`, `<prefix>slot_waiters`, `<prefix>slot_locks`, `<prefix>stream_entries`). Default `cairn_`. */
  /** Prefix of the store's collections (`<prefix>runs`, `<prefix>versions`, `<prefix>schedules`, `<prefix>slots`, `<prefix>slot_waiters`, `<prefix>slot_locks`, `<prefix>pauses`, `<prefix>bulk_operations`). Default `cairn_`. */
  collectionPrefix?: string;
  /**
   * The largest JSON payload (UTF-8 bytes) the engine may hand the store; default 2 MiB. A run's
   * steps, attempts, state and events share one document, which MongoDB caps at 16 MiB: a write
   * that would pass that fails with `PAYLOAD_TOO_LARGE` and changes nothing.
   */
  maxPayloadBytes?: number;
  /**
   * Serialise this process's writes per run. Default: on when the server is FerretDB (detected
   * from `buildInfo`), whose v1 applies a conditional update as read, modify, write without a
   * compare-and-set; off on MongoDB, whose single-document updates are atomic. When on, the store
   * is safe only in one process (`capabilities.multiProcess` is then false).
   */
  serializeWrites?: boolean;
}

/** A MongoDB `WorkflowStore` plus its explicit schema step. */
export interface MongoStore extends WorkflowStore {
  /**
   * Creates every index the store's queries need, idempotently (safe to call on every boot and
   * from several processes at once), and detects the server. Nothing else issues DDL.
   */
  init(): Promise<void>;
  /** What the store detected about the server (one `buildInfo` round trip, cached). */
  server(): Promise<ServerInfo>;
  /** The collection names in use. */
  readonly collections: { runs: string; versions: string };
}

/**
 * Creates the MongoDB store over your `Db`. Call `init()` once (it creates the indexes); the
 * store works on a standalone server, a replica set, and FerretDB v1, and needs no transactions,
 * TTL indexes, change streams, `$lookup` or `arrayFilters`.
 *
 * ```ts
 * const client = await MongoClient.connect(url);
 * const store = createMongoStore({ db: client.db('app') });
 * await store.init();
 * ```
 */
export function createMongoStore(options: MongoStoreOptions): MongoStore {
  const prefix = options.collectionPrefix ?? 'cairn_';
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const ctx = createContext(options.db, prefix, options.serializeWrites);
  const capabilities: StoreCapabilities = {
    get multiProcess() {
      if (options.serializeWrites === true) return false;
      return !(ctx.known()?.serializeWrites ?? false);
    },
    maxPayloadBytes,
    // A step recorded finished carries its attempt 1 inside the same one-document update.
    insertFinished: true,
  };
  // No argument of the wrong runtime type reaches a filter: `{ _id: { $gt: '' } }` would match any run.
  return withArgumentChecks({
    name: 'mongodb',
    capabilities,
    collections: { runs: ctx.runs.collectionName, versions: ctx.versions.collectionName },
    runs: createRunStore(ctx),
    steps: createStepStore(ctx),
    state: createStateStore(ctx),
    events: createEventStore(ctx),
    versions: createVersionStore(ctx),
    history: createHistoryStore(ctx),
    schedules: createScheduleStore(ctx),
    pauses: createPauseStore(ctx),
    bulk: createBulkStore(ctx),
    slots: createSlotStore(ctx),
    streams: createStreamStore(ctx),
    doctor: mongoDoctor(ctx),
    server: () => ctx.server(),
    init: () =>
      guard('init', async () => {
        await ctx.server();
        // One index per command: FerretDB v1.24 panics (and drops the connection) when one
        // createIndexes command names several indexes that already exist.
        for (const index of RUN_INDEXES) await ctx.runs.createIndexes([index]);
        for (const index of VERSION_INDEXES) await ctx.versions.createIndexes([index]);
        for (const index of SCHEDULE_INDEXES) await ctx.schedules.createIndexes([index]);
        for (const index of SLOT_WAITER_INDEXES) await ctx.slotWaiters.createIndexes([index]);
        for (const index of STREAM_ENTRY_INDEXES) await ctx.streamEntries.createIndexes([index]);
      }),
    async close() {
      // The client belongs to the caller; the store holds nothing of its own.
    },
  });
}
