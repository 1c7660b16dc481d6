/**
 * The servers of the scale bench, on data directories that outlive one run: loading a million runs
 * takes minutes, measuring them takes one, so the data is loaded once into `<dir>` and reused until
 * `--drop` removes it. PostgreSQL keeps PostgreSQL's default durability (fsync, synchronous_commit
 * on), as the main bench's server does; Redis keeps its data in an RDB file written once after the
 * load (`SAVE`) and read back at start. Each server is stopped by its own PID.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { asPostgres, findBinDir, freePort, initDataDir, postgresUser, serverArgs } from '../servers/durable-postgres.js';
import { sleep } from '../stats.js';

/** A server started on a kept data directory. */
export interface ScaleServer {
  url: string;
  /** Product, version and settings, for the report. */
  describe: string;
  /** The server's main process (its CPU, with its children's, is read from /proc). */
  pid: number;
  stop(): Promise<void>;
}

function stopper(child: ChildProcess, signal: NodeJS.Signals): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () =>
    (stopping ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    }));
}

async function waitReady(child: ChildProcess, stderr: () => string, what: string, probe: () => Promise<string>): Promise<string> {
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}: ${stderr()}`);
    try {
      return await probe();
    } catch (error) {
      // Redis answers LOADING while it reads a large RDB file: keep waiting (up to 10 minutes).
      if (Date.now() - started > 600_000) throw new Error(`${what} did not become ready: ${String(error)} ${stderr()}`);
      await sleep(100);
    }
  }
}

/** PostgreSQL on `<dir>/pg` (created with initdb when missing), default durability, on a free port. */
export async function startScalePostgres(dir: string): Promise<ScaleServer> {
  const bin = findBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found (set CAIRN_BENCH_POSTGRES_BIN_DIR)');
  const user = process.getuid?.() === 0 ? postgresUser() : undefined;
  const root = join(dir, 'pg');
  const data = join(root, 'data');
  if (!existsSync(join(data, 'PG_VERSION'))) await initDataDir(bin, root, data, user);
  const port = await freePort();
  // Default durability. shared_buffers 1 GB (PostgreSQL's default is 128 MB) as a server holding
  // a million runs would be given; maintenance_work_mem only speeds up an index build, and a larger
  // max_wal_size spaces the checkpoints of the bulk load (each one rewrites whole pages into the WAL).
  const [cmd, args] = asPostgres(
    user,
    join(bin, 'postgres'),
    serverArgs(data, port, root, ['maintenance_work_mem=256MB', 'shared_buffers=1GB', 'max_wal_size=8GB']),
  );
  const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const describe = await waitReady(
    child,
    () => stderr,
    'postgres',
    async () => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
      client.on('error', () => {});
      await client.connect();
      try {
        const res = await client.query<{ v: string; f: string; s: string }>(
          "select current_setting('server_version') v, current_setting('fsync') f, current_setting('synchronous_commit') s",
        );
        const row = res.rows[0]!;
        return `PostgreSQL ${row.v.split(' ')[0]} (fsync=${row.f}, synchronous_commit=${row.s}), data in ${data}`;
      } finally {
        await client.end();
      }
    },
  );
  return { url, describe, pid: child.pid ?? -1, stop: stopper(child, 'SIGINT') };
}

/** Redis on `<dir>/redis` (its `dump.rdb` loaded at start when present), no automatic persistence. */
export async function startScaleRedis(dir: string): Promise<ScaleServer> {
  const root = join(dir, 'redis');
  mkdirSync(root, { recursive: true });
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', root, '--dbfilename', 'dump.rdb'],
    { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `redis://127.0.0.1:${port}`;
  const describe = await waitReady(
    child,
    () => stderr,
    'redis-server',
    async () => {
      const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.ping();
        const info = await client.info('server');
        const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '';
        return `Redis ${version} (no automatic persistence; RDB written once after the load), data in ${root}`;
      } finally {
        client.disconnect();
      }
    },
  );
  return { url, describe, pid: child.pid ?? -1, stop: stopper(child, 'SIGTERM') };
}
