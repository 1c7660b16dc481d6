// Consumer program for `npm i @cairn/core @cairn/kysely better-sqlite3`: a workflow on SQLite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '@cairn/kysely';
import { runGreet } from './workflow.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-consumer-sqlite-'));
try {
  const store = await openSqliteStore(join(dir, 'cairn.sqlite'), { migrate: true });
  try {
    await runGreet(store, 'sqlite');
  } finally {
    await store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`consumer sqlite: workflow completed on Node ${process.version}`);
