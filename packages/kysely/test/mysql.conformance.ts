import { test } from 'node:test';
import { runConformance } from '@cairn/conformance';
import { stopSharedServices } from '@cairn/conformance/services';
import { sqlHarness } from './support/harness.js';
import { mysqlServer } from './support/servers.js';

// The whole conformance suite on MySQL/MariaDB: a fresh table prefix per case in one database.
const server = await mysqlServer();
if (server.skip !== undefined) {
  test('conformance: kysely-mysql', { skip: `no MySQL/MariaDB: ${server.skip}` }, () => {});
} else {
  runConformance(sqlHarness('mysql', server));
  test.after(() => stopSharedServices());
}
