import { join } from 'node:path';
import {
  NotInstalledError,
  findBinary,
  makeTempDir,
  removeDir,
  searchedWhere,
  startOnFreePort,
  type LocalContext,
  type LocalServer,
} from './common.js';

export function findRedis(ctx: LocalContext): string {
  const bin = findBinary(ctx, ['redis-server']);
  if (!bin) throw new NotInstalledError(`redis-server not found ${searchedWhere(ctx)}`);
  return bin;
}

/** A Redis server without persistence in a temp dir. `--port 0` would turn TCP off, so we pick the port. */
export async function startLocalRedis(ctx: LocalContext): Promise<LocalServer> {
  const started = Date.now();
  const bin = findRedis(ctx);
  const dir = makeTempDir(ctx, 'redis');
  try {
    const { Redis } = await import('ioredis');
    const server = await startOnFreePort({
      label: 'Redis',
      dir,
      logFile: join(dir, 'server.log'),
      timeoutMs: ctx.startTimeoutMs,
      spawnFor: (port) => ({
        command: bin,
        args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'],
        stopSignal: 'SIGTERM',
      }),
      probe: async (port) => {
        const url = `redis://127.0.0.1:${port}`;
        const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
        client.on('error', () => {});
        try {
          await client.connect();
          if ((await client.ping()) !== 'PONG') throw new Error('PING did not answer PONG');
          const info = await client.info('server');
          return { url, version: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown' };
        } finally {
          client.disconnect();
        }
      },
    });
    return { ...server, product: 'Redis', label: `Redis ${server.version}`, startMs: Date.now() - started };
  } catch (error) {
    removeDir(dir);
    throw error;
  }
}
