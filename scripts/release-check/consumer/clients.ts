// Consumer program of the client version matrix: every store and queue package installed next to
// its drivers at one bound of their peer ranges (all oldest, or all newest), each running the
// shared workflow against a real server. The servers' URLs come from the environment.
import { MongoClient } from 'mongodb';
import { createMemoryStore } from '@cairn/core';
import { openSqliteStore } from '@cairn/kysely';
import { openMysqlStore } from '@cairn/kysely/mysql';
import { openPostgresStore } from '@cairn/kysely/postgres';
import { createMongoStore } from '@cairn/mongodb';
import { createBullMQQueue } from '@cairn/queue-bullmq';
import { createPgBossQueue } from '@cairn/queue-pg-boss';
import { openRedisStore } from '@cairn/redis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runGreet } from './workflow.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
// One namespace per run: the servers are the release check's own, but a rerun with --keep must not collide.
const tag = `cc${process.pid}`;

const dir = mkdtempSync(join(tmpdir(), 'cairn-consumer-clients-'));
try {
  const sqlite = await openSqliteStore(join(dir, 'cairn.sqlite'), { migrate: true });
  await runGreet(sqlite, 'sqlite').finally(() => sqlite.close());
  console.log('consumer clients: kysely + better-sqlite3 ok');
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const postgres = await openPostgresStore(env('POSTGRES_URL'), { tablePrefix: `${tag}_` });
await runGreet(postgres, 'postgres').finally(() => postgres.close());
console.log('consumer clients: kysely + pg ok');

const mysql = await openMysqlStore(env('MYSQL_URL'), { tablePrefix: `${tag}_` });
await runGreet(mysql, 'mysql').finally(() => mysql.close());
console.log('consumer clients: kysely + mysql2 ok');

const redis = openRedisStore(env('REDIS_URL'), { prefix: `${tag}:` });
await runGreet(redis, 'redis').finally(() => redis.close());
console.log('consumer clients: ioredis ok');

const mongo = await MongoClient.connect(env('MONGODB_URL'));
try {
  const store = createMongoStore({ db: mongo.db(tag) });
  await store.init();
  await runGreet(store, 'mongodb').finally(() => store.close());
  console.log('consumer clients: mongodb ok');
} finally {
  await mongo.close();
}

// The queues carry the run between engine turns; the store is the memory store.
const bullmq = createBullMQQueue({ connection: { ...redisOptions(env('REDIS_URL')) }, prefix: `${tag}q` });
await runGreet(createMemoryStore(), 'bullmq', bullmq).finally(() => bullmq.close());
console.log('consumer clients: bullmq ok');

const pgBoss = createPgBossQueue({ connectionString: env('POSTGRES_URL'), schema: `${tag}_jobs`, pollingIntervalSeconds: 0.5 });
await runGreet(createMemoryStore(), 'pg-boss', pgBoss).finally(() => pgBoss.close());
console.log('consumer clients: pg-boss ok');

function redisOptions(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || 6379) };
}
