import { createServer } from 'node:net';
import { parseRequire, stopSharedServices, useRedis } from '@cairn/conformance/services';

/** A Redis the tests can use, or the reason there is none. */
export type TestRedis = { url: string; source: string; stop(): Promise<void> } | { skip: string };

/** True when `CAIRN_TEST_REQUIRE` names redis (or is `all`): no Redis is then a failure, not a skip. */
export function redisRequired(): boolean {
  return parseRequire(process.env.CAIRN_TEST_REQUIRE).has('redis');
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

/**
 * The Redis of this test process, from `@cairn/conformance/services`: `CAIRN_TEST_REDIS_URL`,
 * else Testcontainers when a runtime answers, else a local `redis-server` on a free port. Without
 * any, the skip reason is printed and returned, unless `CAIRN_TEST_REQUIRE` names redis (or is
 * `all`): then this throws and the tests fail.
 */
export async function provideRedis(): Promise<TestRedis> {
  const service = await useRedis();
  if (service.skipped) {
    console.log(`# @cairn/redis tests skipped: ${service.reason}`);
    return { skip: service.reason };
  }
  return { url: service.url, source: `${service.source}: ${service.detail}`, stop: stopSharedServices };
}
