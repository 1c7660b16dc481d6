/**
 * Isolated namespaces on a shared server: each test (or test file) gets its own PostgreSQL or
 * MySQL database, MongoDB database name or Redis key prefix, so one server per process serves all.
 */
import { randomBytes } from 'node:crypto';

let counter = 0;

/**
 * A fresh identifier, safe as a PostgreSQL/MySQL database name, a MongoDB database name and in a
 * Redis key: `[a-z0-9_]`, starting with a letter, at most 48 characters, unique per process run.
 */
export function uniqueName(prefix = 'cairn'): string {
  const clean =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, '_')
      .replace(/^[^a-z]+/, '') || 'cairn';
  const suffix = `${process.pid.toString(36)}_${(++counter).toString(36)}_${randomBytes(3).toString('hex')}`;
  return `${clean.slice(0, 47 - suffix.length)}_${suffix}`;
}

function checkIdentifier(name: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new Error(`invalid database name ${JSON.stringify(name)}: use letters, digits and _ (at most 63)`);
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Creates a PostgreSQL database on the server of `url` and returns a URL that points at it. */
export async function createPostgresDatabase(url: string, name: string = uniqueName()): Promise<string> {
  checkIdentifier(name);
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  return withDatabase(url, name);
}

/** Drops a database made by {@link createPostgresDatabase} (closing its connections). `dbUrl` is the URL it returned. */
export async function dropPostgresDatabase(dbUrl: string): Promise<void> {
  const name = decodeURIComponent(new URL(dbUrl).pathname.slice(1));
  checkIdentifier(name);
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: withDatabase(dbUrl, 'postgres') });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Creates a schema in the database of `url` (for tests that share one database). */
export async function createPostgresSchema(url: string, name: string = uniqueName()): Promise<string> {
  checkIdentifier(name);
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA "${name}"`);
  } finally {
    await client.end();
  }
  return name;
}

/** Creates a MySQL/MariaDB database (utf8mb4) on the server of `url` and returns a URL that points at it. */
export async function createMysqlDatabase(url: string, name: string = uniqueName()): Promise<string> {
  checkIdentifier(name);
  const mysql = await import('mysql2/promise');
  const conn = await mysql.createConnection(url);
  try {
    await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  } finally {
    await conn.end();
  }
  return withDatabase(url, name);
}

/** Drops a database made by {@link createMysqlDatabase}. `dbUrl` is the URL it returned. */
export async function dropMysqlDatabase(dbUrl: string): Promise<void> {
  const name = decodeURIComponent(new URL(dbUrl).pathname.slice(1));
  checkIdentifier(name);
  const mysql = await import('mysql2/promise');
  const conn = await mysql.createConnection(withDatabase(dbUrl, ''));
  try {
    await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
  } finally {
    await conn.end();
  }
}

/** A fresh MongoDB database name (databases are created on first write). */
export function freshMongoDatabaseName(prefix = 'cairn'): string {
  return uniqueName(prefix);
}

/** Drops a MongoDB database on the server of `url`. */
export async function dropMongoDatabase(url: string, name: string): Promise<void> {
  const { MongoClient } = await import('mongodb');
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.connect();
    await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

/** A fresh Redis key prefix, e.g. `cairn_3f_1_a1b2c3:`. */
export function freshRedisPrefix(prefix = 'cairn'): string {
  return `${uniqueName(prefix)}:`;
}

/** Deletes every key that starts with `prefix` (SCAN + UNLINK). Returns how many were deleted. */
export async function deleteRedisPrefix(url: string, prefix: string): Promise<number> {
  if (prefix === '') throw new Error('refusing to delete keys with an empty prefix');
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  await client.connect();
  let deleted = 0;
  try {
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await client.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
  return deleted;
}
