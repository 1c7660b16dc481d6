import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { stopSharedServices, useMongodb } from '@cairn/conformance/services';
import { MongoClient } from 'mongodb';
import type { Db } from 'mongodb';
import { createMongoStore } from '../../src/index.js';
import type { MongoStore, MongoStoreOptions } from '../../src/index.js';

/** A server for this test file: a client, the commands it sent (for round-trip counts), where from. */
export interface TestServer {
  client: MongoClient;
  url: string;
  detail: string;
  /** Names of the commands sent, in order (command monitoring); tests may clear it. */
  commands: string[];
}

let connecting: Promise<TestServer | { skip: string }> | undefined;

/**
 * The test server: `CAIRN_TEST_MONGODB_URL`, else Testcontainers, else a local FerretDB (through
 * `@cairn/conformance/services`). Without one the tests skip with the reason printed, unless
 * `CAIRN_TEST_REQUIRE` names `mongodb` or is `all`, in which case the provider throws.
 */
export function testServer(): Promise<TestServer | { skip: string }> {
  connecting ??= (async () => {
    const service = await useMongodb();
    if (service.skipped) {
      console.log(`# skipping @cairn/mongodb server tests: ${service.reason}`);
      return { skip: service.reason };
    }
    const client = new MongoClient(service.url, { serverSelectionTimeoutMS: 5000, maxPoolSize: 64, monitorCommands: true });
    await client.connect();
    const commands: string[] = [];
    client.on('commandStarted', (event) => commands.push(event.commandName));
    return { client, url: service.url, detail: service.detail, commands };
  })();
  return connecting;
}

const server = await testServer();
const databases: Db[] = [];

after(async () => {
  if ('client' in server) {
    for (const db of databases) await db.dropDatabase().catch(() => undefined);
    await server.client.close();
  }
  await stopSharedServices();
});

/** A fresh database, dropped when the file's tests end. */
export function freshDb(): Db {
  if (!('client' in server)) throw new Error(server.skip);
  const db = server.client.db(`cairn_t_${randomUUID().replaceAll('-', '').slice(0, 16)}`);
  databases.push(db);
  return db;
}

let shared: Db | undefined;

/** A store with its own collection prefix in this file's database, initialised. */
export async function freshStore(options: Partial<MongoStoreOptions> = {}): Promise<MongoStore> {
  shared ??= freshDb();
  const store = createMongoStore({ db: shared, collectionPrefix: `t${randomUUID().slice(0, 8)}_`, ...options });
  await store.init();
  return store;
}

/** The reason the server tests skip, or `undefined` when there is a server. */
export const skipReason: string | undefined = 'skip' in server ? server.skip : undefined;

/** The running server (only call from a test that is not skipped). */
export const running = (): TestServer => {
  if (!('client' in server)) throw new Error(server.skip);
  return server;
};

/** A `node:test` case that gets a fresh store, skipped with the reason when there is no server. */
export function storeTest(name: string, fn: (store: MongoStore) => Promise<void>): void {
  test(name, { skip: skipReason }, async () => fn(await freshStore()));
}
