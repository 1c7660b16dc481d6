/**
 * Locally installed servers: each starts in a temp dir on a free port, answers a real query, and
 * after stop() its process is gone and its temp dir removed. Skipped (with the reason) where the
 * server is not installed, unless CAIRN_TEST_REQUIRE names it, as in CI.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  createMysqlDatabase,
  createPostgresDatabase,
  createPostgresSchema,
  deleteRedisPrefix,
  dropMongoDatabase,
  dropMysqlDatabase,
  dropPostgresDatabase,
  freshMongoDatabaseName,
  freshRedisPrefix,
  startService,
  summaryLine,
  type RunningService,
  type ServiceName,
} from '../src/services/index.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    assert.equal((error as NodeJS.ErrnoException).code, 'ESRCH');
    return false;
  }
}

/** Starts a local server (no Testcontainers, no env URL) or skips the test with the provider's reason. */
async function local(t: test.TestContext, name: ServiceName): Promise<RunningService | undefined> {
  const env = { ...process.env };
  for (const key of ['CAIRN_TEST_POSTGRES_URL', 'CAIRN_TEST_MYSQL_URL', 'CAIRN_TEST_MONGODB_URL', 'CAIRN_TEST_REDIS_URL']) delete env[key];
  const result = await startService(name, { env, provider: 'local' });
  if (result.skipped) {
    t.skip(result.reason);
    return undefined;
  }
  t.diagnostic(summaryLine(result));
  assert.equal(result.source, 'local');
  assert.ok(result.pid !== undefined && result.dir !== undefined);
  assert.ok(isAlive(result.pid), 'server process is running');
  assert.ok(existsSync(result.dir), 'temp dir exists');
  return result;
}

async function assertStopped(server: RunningService): Promise<void> {
  await server.stop();
  assert.equal(isAlive(server.pid!), false, `pid ${server.pid} is gone after stop()`);
  assert.equal(existsSync(server.dir!), false, `temp dir ${server.dir} is removed after stop()`);
  await server.stop(); // idempotent
}

describe('local servers', () => {
  test('PostgreSQL', async (t) => {
    const server = await local(t, 'postgres');
    if (!server) return;
    try {
      const { default: pg } = await import('pg');
      const dbUrl = await createPostgresDatabase(server.url);
      assert.notEqual(dbUrl, server.url);
      const client = new pg.Client({ connectionString: dbUrl });
      await client.connect();
      try {
        const schema = await createPostgresSchema(dbUrl);
        await client.query(`CREATE TABLE "${schema}".t (id int primary key, v jsonb)`);
        await client.query(`INSERT INTO "${schema}".t VALUES (1, '{"a":[1,2]}')`);
        const res = await client.query(`SELECT v->'a'->>1 AS x, current_database() AS db FROM "${schema}".t`);
        assert.equal(res.rows[0].x, '2');
        assert.equal(`/${res.rows[0].db}`, new URL(dbUrl).pathname);
      } finally {
        await client.end();
      }
      await dropPostgresDatabase(dbUrl);
    } finally {
      await assertStopped(server);
    }
  });

  test('MariaDB (mysql)', async (t) => {
    const server = await local(t, 'mysql');
    if (!server) return;
    try {
      const mysql = await import('mysql2/promise');
      const dbUrl = await createMysqlDatabase(server.url);
      const conn = await mysql.createConnection(dbUrl);
      try {
        await conn.query('CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(100))');
        await conn.query('INSERT INTO t VALUES (1, ?)', ['héllo ✓']);
        const [rows] = await conn.query<Array<{ v: string; db: string } & import('mysql2').RowDataPacket>>('SELECT v, DATABASE() AS db FROM t');
        assert.equal(rows[0]?.v, 'héllo ✓');
        assert.equal(`/${rows[0]?.db}`, new URL(dbUrl).pathname);
      } finally {
        await conn.end();
      }
      await dropMysqlDatabase(dbUrl);
    } finally {
      await assertStopped(server);
    }
  });

  test('Redis', async (t) => {
    const server = await local(t, 'redis');
    if (!server) return;
    try {
      const { Redis } = await import('ioredis');
      const prefix = freshRedisPrefix();
      const client = new Redis(server.url);
      try {
        assert.equal(await client.ping(), 'PONG');
        await client.set(`${prefix}a`, '1');
        await client.hset(`${prefix}b`, { f: 'v' });
        await client.set('other:key', 'kept');
        assert.equal(await client.get(`${prefix}a`), '1');
        assert.equal(await deleteRedisPrefix(server.url, prefix), 2);
        assert.equal(await client.exists(`${prefix}a`, `${prefix}b`), 0);
        assert.equal(await client.get('other:key'), 'kept');
      } finally {
        client.disconnect();
      }
    } finally {
      await assertStopped(server);
    }
  });

  test('MongoDB (FerretDB)', async (t) => {
    const server = await local(t, 'mongodb');
    if (!server) return;
    try {
      const { MongoClient } = await import('mongodb');
      const dbName = freshMongoDatabaseName();
      const client = new MongoClient(server.url, { serverSelectionTimeoutMS: 5000 });
      try {
        await client.connect();
        const col = client.db(dbName).collection<{ _id: string; n: number; tags?: string[] }>('runs');
        await col.insertOne({ _id: 'r1', n: 1 });
        const updated = await col.findOneAndUpdate({ _id: 'r1' }, { $inc: { n: 1 }, $push: { tags: 'x' } }, { returnDocument: 'after' });
        assert.deepEqual(updated, { _id: 'r1', n: 2, tags: ['x'] });
        assert.equal(await col.countDocuments({}), 1);
      } finally {
        await client.close();
      }
      await dropMongoDatabase(server.url, dbName);
    } finally {
      await assertStopped(server);
    }
  });
});
