import type { Collection, Db, Document, FindOneAndUpdateOptions } from 'mongodb';
import { RUN_ONLY } from './documents.js';
import type { RunDoc, VersionDoc } from './documents.js';
import type { ScheduleDoc } from './schedule-store.js';
import type { WorkflowPauseDoc } from './pause-store.js';
import type { BulkOperationDoc } from './bulk-store.js';
import type { SlotKeyDoc, SlotLockDoc, SlotWaiterDoc } from './slot-documents.js';
import { KeyedLock } from './keyed-lock.js';
import type { StreamEntryDoc } from './stream-store.js';

/** What the store learned about the server it talks to. */
export interface ServerInfo {
  /** The server is FerretDB (its `buildInfo` carries `ferretdbVersion`). */
  ferretdb: boolean;
  /** This process serialises its own writes per run (see `MongoStoreOptions.serializeWrites`). */
  serializeWrites: boolean;
  /** `findOneAndUpdate` accepts a projection (FerretDB v1 does not). */
  projectOnModify: boolean;
}

/** Shared plumbing of the store's parts: collections, server quirks, the write lock. */
export interface StoreContext {
  readonly runs: Collection<RunDoc>;
  readonly versions: Collection<VersionDoc>;
  readonly schedules: Collection<ScheduleDoc>;
  /** `<prefix>slots`: one document per slot key, its holders (see `slot-store.ts`). */
  readonly slots: Collection<SlotKeyDoc>;
  /** `<prefix>slot_waiters`: the waiters of every slot key, in line order by index. */
  readonly slotWaiters: Collection<SlotWaiterDoc>;
  /** `<prefix>slot_locks`: the short-lived per-key locks of the slow path, which keep the line exact. */
  readonly slotLocks: Collection<SlotLockDoc>;
  /** `<prefix>stream_entries`: one document per entry of a run's stream (see `stream-store.ts`). */
  readonly streamEntries: Collection<StreamEntryDoc>;
  /** `<prefix>pauses`: one document per paused workflow, `_id` its name (see `pause-store.ts`). */
  readonly pauses: Collection<WorkflowPauseDoc>;
  /** `<prefix>bulk_operations`: one document per bulk operation, `_id` its id (see `bulk-store.ts`). */
  readonly bulkOperations: Collection<BulkOperationDoc>;
  /** Detects the server once (one `buildInfo` round trip) and caches the answer. */
  server(): Promise<ServerInfo>;
  /** The answer of `server()` if it already came, else `undefined`. */
  known(): ServerInfo | undefined;
  /**
   * Runs a write. When writes are serialised (FerretDB) it waits for this process's earlier writes
   * to the same key; on MongoDB it runs at once and the server's atomic update does the work.
   */
  exclusive<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /** Options for a `findOneAndUpdate` that returns the document after the write. */
  modifyOptions(projection?: Document): Promise<FindOneAndUpdateOptions>;
}

/**
 * One lock per process, so that two store objects over the same collections in one process also
 * wait for each other (keys carry the database and prefix).
 */
const PROCESS_LOCK = new KeyedLock();

/** Creates the context over the user's database. Nothing is sent to the server yet. */
export function createContext(db: Db, prefix: string, serializeWrites: boolean | undefined): StoreContext {
  const runs = db.collection<RunDoc>(`${prefix}runs`);
  const versions = db.collection<VersionDoc>(`${prefix}versions`);
  const schedules = db.collection<ScheduleDoc>(`${prefix}schedules`);
  const slots = db.collection<SlotKeyDoc>(`${prefix}slots`);
  const slotWaiters = db.collection<SlotWaiterDoc>(`${prefix}slot_waiters`);
  const slotLocks = db.collection<SlotLockDoc>(`${prefix}slot_locks`);
  const streamEntries = db.collection<StreamEntryDoc>(`${prefix}stream_entries`);
  const pauses = db.collection<WorkflowPauseDoc>(`${prefix}pauses`);
  const bulkOperations = db.collection<BulkOperationDoc>(`${prefix}bulk_operations`);
  const namespace = `${db.databaseName}\u0000${prefix}\u0000`;
  let info: ServerInfo | undefined;
  let detecting: Promise<ServerInfo> | undefined;

  const detect = async (): Promise<ServerInfo> => {
    let ferretdb = false;
    try {
      const build = await db.command({ buildInfo: 1 });
      ferretdb = typeof build === 'object' && build !== null && 'ferretdbVersion' in build;
    } catch {
      // A server that refuses buildInfo is not FerretDB (which always answers it): assume MongoDB.
    }
    info = { ferretdb, serializeWrites: serializeWrites ?? ferretdb, projectOnModify: !ferretdb };
    return info;
  };

  const server = (): Promise<ServerInfo> => {
    if (info) return Promise.resolve(info);
    detecting ??= detect().finally(() => {
      detecting = undefined;
    });
    return detecting;
  };

  return {
    runs,
    versions,
    schedules,
    slots,
    slotWaiters,
    slotLocks,
    streamEntries,
    pauses,
    bulkOperations,
    server,
    known: () => info,
    async exclusive(key, fn) {
      const s = await server();
      return s.serializeWrites ? PROCESS_LOCK.run(namespace + key, fn) : fn();
    },
    async modifyOptions(projection = RUN_ONLY) {
      const s = await server();
      return s.projectOnModify ? { returnDocument: 'after', projection } : { returnDocument: 'after' };
    },
  };
}
