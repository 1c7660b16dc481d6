// A fresh SQLite file in a temporary folder as the store the CLI tests reach by --url (embedded:
// no server), with the cases that do not depend on the backend (`thorough`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '@cairn/kysely';
import type { CliTarget } from './cli-cases.js';

export function sqliteTarget(folderPrefix: string): CliTarget {
  let dir = '';
  return {
    name: 'SQLite (--url sqlite:<file>)',
    thorough: true,
    async setup() {
      dir = mkdtempSync(join(tmpdir(), folderPrefix));
      return { url: `sqlite:${join(dir, 'cairn.sqlite')}`, args: [] };
    },
    open: () => openSqliteStore(join(dir, 'cairn.sqlite'), { migrate: true }),
    async teardown() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
