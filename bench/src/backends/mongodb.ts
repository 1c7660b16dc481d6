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
      // FerretDB v1 (SQLite handler) rewrites the whole run document on every update, and the run
      // document holds every step: a step costs O(steps so far), recording N steps O(N²); it also
      // slows down as the collection grows. Measured here: ~40 ms/step at 10 steps, ~120 at 100,
      // ~320 at 200 — 2,000 steps would take hours.
      scale: (config) =>
        !isFerret || config.mode !== 'full'
          ? undefined
          : {
              config: {
                ...config,
                inline: { sizes: [10, 100], warmup: 0, reps: 3 },
                replay: { sizes: [50, 100, 200], warmup: 1, reps: 3 },
                latency: { ...config.latency, samples: 20, warmup: 1, reps: 3 },
                localThroughput: { ...config.localThroughput, runs: 20, reps: 1 },
                flow: { ...config.flow, runs: 10, smallRuns: 2 },
              },
              note: 'FerretDB rewrites the whole run document on each update and the run document holds every step, so a step costs more the longer the run (~40 ms/step at 10 steps, ~120 ms at 100, ~320 ms at 200 here); its replay sizes are 50/100/200 (not 100/1,000/2,000), with fewer repetitions and runs (flow: 10 runs per variant, 20 + 2 for fairness).',
            },
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
        await counted
          .db(dbName)
          .dropDatabase()
          .catch(() => {});
        await Promise.allSettled([counted.close(), plain.close()]);
      },
    };
  },
};
