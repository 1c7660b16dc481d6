import { join } from 'node:path';
import { restartable } from './restartable.js';
import { NotInstalledError, findBinary, makeTempDir, removeDir, searchedWhere, startOnFreePort, type LocalContext, type LocalServer } from './common.js';

export function findRedis(ctx: LocalContext): string {
  const bin = findBinary(ctx, ['redis-server']);
  if (!bin) throw new NotInstalledError(`redis-server not found ${searchedWhere(ctx)}`);
  return bin;
}

/**
 * Before a restart: `SHUTDOWN SAVE` writes the data set to disk and stops the server in one
 * command, so the restarted server has every write acknowledged before it (a server without
 * persistence would come back empty, which no real deployment of a Redis store does).
 */
async function shutdownSave(port: number): Promise<void> {
  const { Redis } = await import('ioredis');
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    // The server closes the connection instead of answering.
    await client.call('SHUTDOWN', 'SAVE').catch(() => undefined);
  } finally {
    client.disconnect();
  }
}

/** A Redis server without persistence in a temp dir. `--port 0` would turn TCP off, so we pick the port. */
export async function startLocalRedis(ctx: LocalContext): Promise<LocalServer> {
  const started = Date.now();
  const bin = findRedis(ctx);
  const dir = makeTempDir(ctx, 'redis');
  try {
    const { Redis } = await import('ioredis');
    const probe = async (port: number): Promise<{ url: string; version: string }> => {
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
    };
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
      probe,
    });
    const restart = restartable(server.process, {
      label: 'Redis',
      port: server.port,
      spawn: server.spawn,
      timeoutMs: ctx.startTimeoutMs,
      probe,
      beforeHalt: shutdownSave,
    });
    return { ...server, product: 'Redis', label: `Redis ${server.version}`, startMs: Date.now() - started, restart };
  } catch (error) {
    removeDir(dir);
    throw error;
  }
}
