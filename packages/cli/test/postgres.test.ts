// The CLI against PostgreSQL through --url (a database of its own on the test server), and
// `cairn check` / `cairn export` on another.
import { after } from 'node:test';
import { createPostgresDatabase, dropPostgresDatabase, stopSharedServices, uniqueName, usePostgres } from '@cairn/conformance/services';
import { openPostgresStore } from '@cairn/kysely/postgres';
import { checkCases } from './support/check-cases.js';
import { cliCases, type CliTarget } from './support/cli-cases.js';

const server = await usePostgres();

/** A database of its own on the test server, named from `prefix`. */
function postgresTarget(prefix: string): CliTarget {
  let dbUrl = '';
  return {
    name: 'PostgreSQL (--url postgres://)',
    ...(server.skipped ? { skip: server.reason } : {}),
    async setup() {
      if (server.skipped) throw new Error(server.reason);
      dbUrl = await createPostgresDatabase(server.url, uniqueName(prefix));
      return { url: dbUrl, args: [] };
    },
    open: () => openPostgresStore(dbUrl, { migrate: true }),
    async teardown() {
      if (dbUrl) await dropPostgresDatabase(dbUrl);
    },
  };
}

cliCases(postgresTarget('cli_pg'));
checkCases(postgresTarget('cli_check'));
after(() => stopSharedServices());
