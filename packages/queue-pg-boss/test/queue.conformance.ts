import { test } from 'node:test';
import { runQueueConformance } from '@cairn/conformance';
import { stopSharedServices } from '@cairn/conformance/services';
import { pgBossHarness } from './support/pg-boss-harness.js';
import { providePostgres } from './support/postgres.js';

// The queue contract on pg-boss, over one PostgreSQL (CAIRN_TEST_POSTGRES_URL, Testcontainers or
// a local server): a fresh database per case. Without a PostgreSQL it skips with the reason,
// unless CAIRN_TEST_REQUIRE names postgres (or is `all`), which fails instead.
const server = await providePostgres();
if ('skip' in server) {
  test('queue conformance: pg-boss', { skip: `no PostgreSQL: ${server.skip}` }, () => {});
} else {
  runQueueConformance(pgBossHarness(server));
  // With heartbeats off, expiry alone must still bring a killed worker's job back.
  runQueueConformance(pgBossHarness({ ...server, mode: 'expiry' }), { only: ['queue.redelivery'] });
  test.after(() => stopSharedServices());
}
