import { test } from 'node:test';
import { runConformance } from '@cairn/conformance';
import { stopSharedServices } from '@cairn/conformance/services';
import { redisHarness } from './support/conformance-harness.js';
import { provideRedis } from './support/redis-server.js';

// The whole conformance suite, in both index modes, on one Redis (CAIRN_TEST_REDIS_URL,
// Testcontainers or a local redis-server): a fresh key prefix per case. Without a Redis it skips
// with the reason, unless CAIRN_TEST_REQUIRE names redis (or is `all`), which fails instead.
const server = await provideRedis();
if ('skip' in server) {
  test('conformance: redis', { skip: `no Redis: ${server.skip}` }, () => {});
} else {
  runConformance(redisHarness({ url: server.url, source: server.source, cluster: false }));
  runConformance(redisHarness({ url: server.url, source: server.source, cluster: true }));
  test.after(() => stopSharedServices());
}
