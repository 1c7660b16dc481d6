import { test } from 'node:test';
import { runQueueConformance } from '@cairn/conformance';
import { stopSharedServices } from '@cairn/conformance/services';
import { bullmqHarness } from './support/bullmq-harness.js';
import { provideRedis } from './support/redis.js';

// The queue contract on BullMQ, over one Redis (CAIRN_TEST_REDIS_URL, Testcontainers or a local
// redis-server): a fresh key prefix per case. Groups are a BullMQ Pro feature, so the group case
// is skipped by capability. Without a Redis it skips with the reason, unless CAIRN_TEST_REQUIRE
// names redis (or is `all`), which fails instead.
const server = await provideRedis();
if ('skip' in server) {
  test('queue conformance: bullmq', { skip: `no Redis: ${server.skip}` }, () => {});
} else {
  runQueueConformance(bullmqHarness(server));
  test.after(() => stopSharedServices());
}
