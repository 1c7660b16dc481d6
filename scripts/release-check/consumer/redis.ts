// Consumer program for `npm i @cairn/core @cairn/redis ioredis`: a workflow on Redis (REDIS_URL).
import { Redis } from 'ioredis';
import { createRedisStore } from '@cairn/redis';
import { runGreet } from './workflow.js';

const url = process.env['REDIS_URL'];
if (!url) throw new Error('REDIS_URL is not set');
const prefix = `cairn-consumer-${process.pid}-${Date.now()}`;
const redis = new Redis(url, { maxRetriesPerRequest: 2 });
try {
  const store = createRedisStore({ redis, prefix });
  await runGreet(store, 'redis');
  await store.close();
  // Leave the server as we found it.
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
} finally {
  redis.disconnect();
}
console.log(`consumer redis: workflow completed on Node ${process.version}`);
