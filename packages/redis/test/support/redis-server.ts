import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** A Redis the tests can use, or the reason there is none. */
export type TestRedis = { url: string; source: string; stop(): Promise<void> } | { skip: string };

/** True when `CAIRN_TEST_REQUIRE` names redis (or `all`): no Redis is then a failure, not a skip. */
export function redisRequired(): boolean {
  const raw = process.env.CAIRN_TEST_REQUIRE ?? '';
  return raw.split(',').map((s) => s.trim().toLowerCase()).some((s) => s === 'redis' || s === 'all');
}

/** A free TCP port on 127.0.0.1 (released before it is used: good enough for tests). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

async function ping(url: string, timeoutMs: number): Promise<string | undefined> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: timeoutMs, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    const info = String(await client.call('INFO', 'server'));
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}

/** Starts `redis-server` on a free port in a temporary directory (no persistence). */
export async function startLocalRedis(extraArgs: string[] = []): Promise<{ url: string; port: number; process: ChildProcess; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-redis-'));
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) break;
    if ((await ping(url, 200)) !== undefined) return { url, port, process: child, stop };
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  await stop();
  throw new Error(`redis-server did not start on port ${port}`);
}

/**
 * Finds a Redis for the tests: `CAIRN_TEST_REDIS_URL` when set, else a local `redis-server`
 * started on a free port. Without either, a skip reason (or an error when Redis is required).
 */
export async function provideRedis(): Promise<TestRedis> {
  const fromEnv = process.env.CAIRN_TEST_REDIS_URL;
  if (fromEnv) {
    const version = await ping(fromEnv, 2000);
    if (version !== undefined) return { url: fromEnv, source: `Redis ${version} at CAIRN_TEST_REDIS_URL`, stop: async () => {} };
    return missing(`CAIRN_TEST_REDIS_URL=${fromEnv} is not reachable`);
  }
  if (spawnSync('redis-server', ['--version']).status === 0) {
    const local = await startLocalRedis();
    const version = await ping(local.url, 1000);
    return { url: local.url, source: `local redis-server ${version} on :${local.port}`, stop: local.stop };
  }
  return missing('no CAIRN_TEST_REDIS_URL and no redis-server on PATH');
}

/**
 * Why no Redis can be had (printed, and then the caller registers its tests as skipped), or
 * `undefined` when one can. Throws instead when `CAIRN_TEST_REQUIRE` names redis.
 */
export async function redisSkipReason(): Promise<string | undefined> {
  const fromEnv = process.env.CAIRN_TEST_REDIS_URL;
  if (fromEnv) return (await ping(fromEnv, 2000)) === undefined ? skipReasonOf(missing(`CAIRN_TEST_REDIS_URL=${fromEnv} is not reachable`)) : undefined;
  if (spawnSync('redis-server', ['--version']).status === 0) return undefined;
  return skipReasonOf(missing('no CAIRN_TEST_REDIS_URL and no redis-server on PATH'));
}

const skipReasonOf = (result: TestRedis): string | undefined => ('skip' in result ? result.skip : undefined);

function missing(reason: string): TestRedis {
  if (redisRequired()) throw new Error(`Redis is required (CAIRN_TEST_REQUIRE) but ${reason}`);
  console.log(`# @cairn/redis tests skipped: ${reason}`);
  return { skip: reason };
}
