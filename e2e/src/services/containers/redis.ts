import type { BackendContainer } from './common.js';

/**
 * Redis through `@testcontainers/redis`, as on the official image: the module's command and its
 * wait for "Ready to accept connections". No persistence, as for the local test server.
 */
export const redisContainer: BackendContainer = {
  async start(image, timeoutMs) {
    const { RedisContainer } = await import('@testcontainers/redis');
    const c = await new RedisContainer(image).withCommand(['redis-server', '--save', '', '--appendonly', 'no']).withStartupTimeout(timeoutMs).start();
    return { url: c.getConnectionUrl(), id: c.getId().slice(0, 12), stop: async () => void (await c.stop()) };
  },
  async describe(url) {
    const { Redis } = await import('ioredis');
    const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
    try {
      await client.connect();
      const info = await client.info('server');
      const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
      return { version, label: `Redis ${version}` };
    } finally {
      client.disconnect();
    }
  },
};
