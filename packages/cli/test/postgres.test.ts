// The CLI against PostgreSQL through --url (a database of its own on the test server), and
// `cairn check` / `cairn export` on another.
import { after } from 'node:test';
import { createPostgresDatabase, dropPostgresDatabase, stopSharedServices, uniqueName, usePostgres } from '@cairn/conformance/services';
import { openPostgresStore } from '@cairn/kysely/postgres';
import { checkCases } from './support/check-cases.js';
import { cliCases } from './support/cli-cases.js';

const server = await usePostgres();
let dbUrl = '';
cliCases({
  name: 'PostgreSQL (--url postgres://)',
  ...(server.skipped ? { skip: server.reason } : {}),
  async setup() {
    if (server.skipped) throw new Error(server.reason);
    dbUrl = await createPostgresDatabase(server.url, uniqueName('cli_pg'));
    return { url: dbUrl, args: [] };
  },
  open: () => openPostgresStore(dbUrl, { migrate: true }),
  async teardown() {
    if (dbUrl) await dropPostgresDatabase(dbUrl);
  },
});
let checkDbUrl = '';
checkCases({
  name: 'PostgreSQL (--url postgres://)',
  ...(server.skipped ? { skip: server.reason } : {}),
  async setup() {
    if (server.skipped) throw new Error(server.reason);
    checkDbUrl = await createPostgresDatabase(server.url, uniqueName('cli_check'));
    return { url: checkDbUrl, args: [] };
  },
  open: () => openPostgresStore(checkDbUrl, { migrate: true }),
  async teardown() {
    if (checkDbUrl) await dropPostgresDatabase(checkDbUrl);
  },
});
after(() => stopSharedServices());
