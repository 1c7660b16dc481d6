import { createMongoStore } from '@cairn/mongodb';
import { MongoClient } from 'mongodb';
import { StoreProbe } from '../instrument/counting-store.js';
import { RoundTripCounter } from '../instrument/round-trips.js';
import type { BackendAdapter, BackendInstance } from './types.js';

let seq = 0;

/**
 * The MongoDB protocol through `@cairn/mongodb` (FerretDB locally). Round trips are counted with the
 * driver's command monitoring (`monitorCommands: true`, one `commandStarted` per command sent).
 */
export const mongodbBackend: BackendAdapter = {
  name: 'mongodb',
  title: 'MongoDB (FerretDB)',
  async setup(ctx): Promise<BackendInstance> {
    const server = await ctx.servers.service('mongodb');
    const counter = new RoundTripCounter();
    const counted = new MongoClient(server.url, { monitorCommands: true, serverSelectionTimeoutMS: 10_000 });
    counted.on('commandStarted', (event) => counter.hit(event.commandName));
    await counted.connect();
    const plain = new MongoClient(server.url, { serverSelectionTimeoutMS: 10_000 });
    await plain.connect();
    const dbName = `cairn_bench_${process.pid}`;
    const isFerret = server.product.startsWith('FerretDB');
    return {
      name: 'mongodb',
      title: isFerret ? 'MongoDB (FerretDB)' : 'MongoDB',
      server: `${server.product} (${server.durability})`,
      driverCounted: true,
      counter,
      async openStore() {
        const collectionPrefix = `b${++seq}_`;
        const store = createMongoStore({ db: counted.db(dbName), collectionPrefix });
        await store.init();
        return {
          probe: new StoreProbe(store, counter),
          peer: async () => {
            const peer = createMongoStore({ db: plain.db(dbName), collectionPrefix });
            await peer.init();
            return peer;
          },
          close: async () => {},
        };
      },
      async close() {
        await counted.db(dbName).dropDatabase().catch(() => {});
        await Promise.allSettled([counted.close(), plain.close()]);
      },
    };
  },
};
