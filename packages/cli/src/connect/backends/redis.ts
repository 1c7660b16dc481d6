import type { UrlBackend } from '../backend.js';
import { importBackend } from '../backend.js';

/** `redis://` and `rediss://`: `openRedisStore` of `@cairn/redis` over `ioredis`. */
export const redisBackend: UrlBackend = {
  title: 'Redis',
  schemes: ['redis:', 'rediss:'],
  packages: '@cairn/redis ioredis',
  async open(url, options) {
    const { openRedisStore } = await importBackend(this, () => import('@cairn/redis'));
    return openRedisStore(url, options.prefix === undefined ? {} : { prefix: options.prefix });
  },
};
