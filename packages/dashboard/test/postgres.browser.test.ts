import { after } from 'node:test';
import { createPostgresDatabase, dropPostgresDatabase, stopSharedServices, summaryLine, usePostgres } from '@cairn/conformance/services';
import { openPostgresStore } from '@cairn/kysely/postgres';
import { browserSuite } from './support/browser-suite.js';

// The dashboard over an engine on PostgreSQL (a server from the test-server provider).
const pg = await usePostgres();
console.error(summaryLine(pg));
after(stopSharedServices);

browserSuite('postgres', {
  skip: pg.skipped && pg.reason,
  async open() {
    if (pg.skipped) throw new Error(pg.reason);
    const url = await createPostgresDatabase(pg.url);
    const store = await openPostgresStore(url);
    return {
      store,
      async close() {
        await store.close();
        await dropPostgresDatabase(url);
      },
    };
  },
});
