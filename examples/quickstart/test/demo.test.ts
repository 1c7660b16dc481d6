import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The README's first command must keep working: run the demo for real (it SIGKILLs a worker
// process midway) and check that every claim it makes held.
test('pnpm demo: the run survives a SIGKILL of its worker and every claim holds', () => {
  const demo = fileURLToPath(new URL('../src/demo.ts', import.meta.url));
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@cairn/source', demo], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(result.status, 0, `demo failed:\n${result.stdout}\n${result.stderr}`);
  const claims = result.stdout.split('\n').filter((line) => /^[✔✘] /.test(line));
  assert.equal(claims.length, 7, result.stdout);
  assert.deepEqual(claims.filter((line) => line.startsWith('✘')), []);
  assert.match(result.stdout, /pack parcel\s+1\s+abandoned/);
  assert.match(result.stdout, /pack parcel\s+2\s+succeeded/);
});
