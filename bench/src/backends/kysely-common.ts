import type { WorkflowStore } from '@cairn/core/backend';
import { createKyselyStore, migrateToLatest, type KyselyStoreOptions } from '@cairn/kysely';
import { StoreProbe } from '../instrument/counting-store.js';
import type { RoundTripCounter } from '../instrument/round-trips.js';
import type { AnyDb } from './sql-drivers.js';
import type { OpenedStore, StoreSpec } from './types.js';

let seq = 0;

/** A fresh table prefix per opened store (the namespace). */
export function freshPrefix(): string {
  return `b${process.pid}_${++seq}_`;
}

/**
 * Opens a counted `@cairn/kysely` store on a fresh table prefix (migrated first), with a peer
 * store over its own uncounted Kysely instance.
 */
export async function openKyselyStore(options: {
  counter: RoundTripCounter;
  /** The SQL dialect, exposed with the tables as `OpenedStore.sql`. */
  dialect: 'postgres' | 'sqlite' | 'mysql';
  counted: () => Promise<AnyDb>;
  uncounted: () => Promise<AnyDb>;
  spec?: (prefix: string) => StoreSpec;
  /** Wake-up signals of the peer store ("client" process), when the backend has them. */
  peerSignals?: (db: AnyDb, tablePrefix: string) => KyselyStoreOptions['signals'];
}): Promise<OpenedStore> {
  const db = await options.counted();
  const tablePrefix = freshPrefix();
  await migrateToLatest(db, { tablePrefix });
  const probe = new StoreProbe(createKyselyStore({ db, tablePrefix }), options.counter);
  const peers: AnyDb[] = [];
  const peerStores: WorkflowStore[] = [];
  return {
    probe,
    sql: { db, tablePrefix, dialect: options.dialect },
    ...(options.spec ? { spec: options.spec(tablePrefix) } : {}),
    async peer(): Promise<WorkflowStore> {
      const peerDb = await options.uncounted();
      peers.push(peerDb);
      const signals = options.peerSignals?.(peerDb, tablePrefix);
      const store = createKyselyStore({ db: peerDb, tablePrefix, ...(signals ? { signals } : {}) });
      peerStores.push(store);
      return store;
    },
    async close() {
      await Promise.allSettled(peerStores.map((s) => s.close()));
      await Promise.allSettled([db.destroy(), ...peers.map((p) => p.destroy())]);
    },
  };
}
