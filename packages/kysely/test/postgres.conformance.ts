import { test } from 'node:test';
import { runConformance } from '@cairn/conformance';
import { stopSharedServices } from '@cairn/conformance/services';
import { sqlHarness } from './support/harness.js';
import { postgresServer } from './support/servers.js';

// The whole conformance suite on PostgreSQL: a fresh table prefix per case in one database.
const server = await postgresServer();
if (server.skip !== undefined) {
  test('conformance: kysely-postgres', { skip: `no PostgreSQL: ${server.skip}` }, () => {});
} else {
  runConformance(sqlHarness('postgres', server));
  test.after(() => stopSharedServices());
}
