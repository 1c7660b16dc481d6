import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '@cairn/kysely';
import { browserSuite } from './support/browser-suite.js';

// The dashboard over an engine on SQLite (embedded: no server). Also takes the screenshots the
// docs show (test-output/sqlite/*.png, copied to docs/images/).
browserSuite('sqlite', {
  screenshots: true,
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-dashboard-'));
    const store = await openSqliteStore(join(dir, 'runs.sqlite'));
    return {
      store,
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});
