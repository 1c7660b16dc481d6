import { useRedis } from '@cairn/conformance/services';

/** A Redis the tests can use, or the reason there is none. */
export type TestRedis = { url: string; source: string } | { skip: string };

/**
 * The Redis of this test process, from `@cairn/conformance/services`: `CAIRN_TEST_REDIS_URL`, else
 * Testcontainers when a runtime answers, else a local `redis-server` on a free port. Without any,
 * the reason is printed and returned, unless `CAIRN_TEST_REQUIRE` names redis (or is `all`): then
 * this throws and the tests fail.
 */
export async function provideRedis(): Promise<TestRedis> {
  const service = await useRedis();
  if (service.skipped) {
    console.log(`# @cairn/queue-bullmq tests skipped: ${service.reason}`);
    return { skip: service.reason };
  }
  return { url: service.url, source: `${service.source}: ${service.detail}` };
}
