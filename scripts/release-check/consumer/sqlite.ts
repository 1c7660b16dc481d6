// Consumer program for `npm i @cairn/core @cairn/kysely @cairn/cli better-sqlite3`: a workflow on
// SQLite, then the installed `cairn` binary lists and shows its run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
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
  // The bin npm linked, run as a user runs it: no tsx, no workspace, the optional peers resolved.
  const cairn = (...args: string[]) =>
    execFileSync(join('node_modules', '.bin', 'cairn'), [...args, '--url', `sqlite:${join(dir, 'cairn.sqlite')}`], { encoding: 'utf8' });
  const listed = JSON.parse(cairn('runs', '--json')) as { runs: { id: string; status: string }[] };
  assert.deepEqual(
    listed.runs.map((r) => r.status),
    ['completed'],
    'cairn runs lists the completed run',
  );
  assert.match(cairn('show', listed.runs[0]?.id as string), /^status\s+COMPLETED after/m, 'cairn show prints its timeline');
  console.log('consumer sqlite: cairn runs and cairn show read the run');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`consumer sqlite: workflow completed on Node ${process.version}`);
