import { Redis } from 'ioredis';
import type { RequestCounter } from './request-counter.js';

/**
 * Commands counted by Redis (INFO commandstats), by command name. Commands a Lua script runs are
 * counted too (besides its `evalsha`), so these are commands executed, not round trips. The
 * counter's own INFO and CONFIG are left out.
 */
export async function openRedisRequestCounter(url: string): Promise<RequestCounter> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  await redis.connect();
  return {
    async reset() {
      await redis.config('RESETSTAT');
    },
    async read() {
      const info = await redis.info('commandstats');
      const rows: { request: string; count: number }[] = [];
      for (const line of info.split('\n')) {
        const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
        if (!m || m[1] === 'info' || m[1]!.startsWith('config')) continue;
        rows.push({ request: m[1]!, count: Number(m[2]) });
      }
      rows.sort((a, b) => b.count - a.count);
      return { total: rows.reduce((sum, r) => sum + r.count, 0), top: rows.slice(0, 16) };
    },
    async close() {
      redis.disconnect();
    },
  };
}
