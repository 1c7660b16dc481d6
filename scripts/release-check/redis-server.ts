// A Redis for the redis consumer test, from the test-server provider of @cairn/conformance
// (e2e/src/services): CAIRN_TEST_REDIS_URL, else Testcontainers, else a local redis-server on a
// free port in a temp dir, stopped (and its dir removed) by `stop()`. A release check does not
// skip: with no Redis at all it fails and says how to provide one.
import { startService } from '../../e2e/src/services/index.js';

export interface RedisForCheck {
  url: string;
  detail: string;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisForCheck> {
  const result = await startService('redis', { log: (line) => console.log(`  [services] ${line}`) });
  if (result.skipped) {
    throw new Error(`no Redis for the redis consumer test: ${result.reason}. Install redis-server or set CAIRN_TEST_REDIS_URL.`);
  }
  return { url: result.url, detail: `${result.source}: ${result.detail}`, stop: () => result.stop() };
}
