// `cairn check`, `cairn export` and the divergence in `cairn show` against SQLite (embedded: also
// runs under Node 22 in `test:embedded`), with the cases that do not depend on the backend.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '@cairn/kysely';
import { checkCases } from './support/check-cases.js';

let dir = '';
checkCases({
  name: 'SQLite (--url sqlite:<file>)',
  thorough: true,
  async setup() {
    dir = mkdtempSync(join(tmpdir(), 'cairn-cli-check-sqlite-'));
    return { url: `sqlite:${join(dir, 'cairn.sqlite')}`, args: [] };
  },
  open: () => openSqliteStore(join(dir, 'cairn.sqlite'), { migrate: true }),
  async teardown() {
    rmSync(dir, { recursive: true, force: true });
  },
});
