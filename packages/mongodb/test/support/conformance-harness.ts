import type { WorkflowStore } from '@cairn/core/backend';
import type { ConformanceHarness } from '@cairn/conformance';
import { stopSharedServices, useMongodb } from '@cairn/conformance/services';
import { MongoClient } from 'mongodb';
import { createMongoStore } from '../../src/index.js';

/**
 * The conformance harness of the MongoDB store: namespace = a fresh database per test, one client
 * per store instance (so the multi-process cases race over separate connection pools), the
 * database dropped afterwards.
 *
 * It finds the server before the suite registers its cases, because the cases that need several
 * processes must be skipped on FerretDB: FerretDB v1 does not apply a conditional update
 * atomically, the store then serialises writes inside one process, and separate processes would
 * race (see docs/backends/mongodb.md).
 */
export async function mongoHarness(): Promise<ConformanceHarness> {
  const service = await useMongodb();
  if (service.skipped) {
    return {
      name: 'mongodb',
      source: 'no MongoDB',
      setup: async () => ({ skip: service.reason }),
      createStore: () => Promise.reject(new Error(service.reason)),
    };
  }
  const { url } = service;
  const probe = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  let ferretdb: boolean;
  let detail: string;
  try {
    const info = await probe.db('admin').command({ buildInfo: 1 });
    ferretdb = 'ferretdbVersion' in info;
    detail = `${service.detail}; ${ferretdb ? 'FerretDB, wire version of MongoDB' : 'MongoDB'} ${String(info.version)}`;
  } finally {
    await probe.close();
  }
  const clients = new WeakMap<WorkflowStore, MongoClient>();
  return {
    name: ferretdb ? 'mongodb (FerretDB)' : 'mongodb',
    source: detail,
    capabilities: { multiProcess: !ferretdb },
    async createStore(namespace) {
      const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000, maxPoolSize: 16 });
      await client.connect();
      const store = createMongoStore({ db: client.db(namespace) });
      await store.init();
      clients.set(store, client);
      const close = store.close.bind(store);
      // The store never closes a client it did not create; this harness created it, so it does.
      return Object.assign(store, {
        async close() {
          await close();
          await client.close();
        },
      });
    },
    async destroyStore(store, namespace) {
      await clients.get(store)?.db(namespace).dropDatabase();
      await store.close();
    },
    async teardown() {
      await stopSharedServices();
    },
    /** Every document, in every collection of the namespace, that mentions the run id. */
    async artefactsOf(store, namespace, runId) {
      const client = clients.get(store);
      if (!client) return ['(no client for this store)'];
      const db = client.db(namespace);
      const needle = JSON.stringify(runId).slice(1, -1);
      const left: string[] = [];
      for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
        for (const doc of await db.collection(name).find({}).toArray()) {
          const text = JSON.stringify(doc);
          if (text.includes(needle)) left.push(`${name}: ${text.slice(0, 160)}`);
        }
      }
      return left;
    },
    /** Every document of every collection of the namespace's database, as JSON text. */
    async rawContents(store, namespace) {
      const client = clients.get(store);
      if (!client) return ['(no client for this store)'];
      const db = client.db(namespace);
      const out: string[] = [];
      for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
        for (const doc of await db.collection(name).find({}).toArray()) out.push(`${name}: ${JSON.stringify(doc)}`);
      }
      return out;
    },
  };
}
