import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The README's first command must keep working: run the demo for real (it SIGKILLs a worker
// process midway) and check that every claim it made held; then the command it prints to inspect
// the run with the cairn CLI must work on the SQLite file it kept.
test('pnpm demo: the run survives a SIGKILL of its worker, every claim holds, and `cairn show` reads its run', () => {
  const demo = fileURLToPath(new URL('../src/demo.ts', import.meta.url));
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@cairn/source', demo], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(result.status, 0, `demo failed:\n${result.stdout}\n${result.stderr}`);
  const claims = result.stdout.split('\n').filter((line) => /^[✔✘] /.test(line));
  assert.equal(claims.length, 7, result.stdout);
  assert.deepEqual(
    claims.filter((line) => line.startsWith('✘')),
    [],
  );
  // The timeline: attempt 1 of "pack parcel" abandoned on worker-1, attempt 2 succeeded on worker-2.
  assert.match(result.stdout, /^pack parcel\s+1 abandoned\s.*\n {2}└ on worker-1 · worker died.*\n\s+2 succeeded\s.*\n {2}└ on worker-2$/m);

  const command = /^ {2}pnpm cairn (show \S+ --url sqlite:\S+)$/m.exec(result.stdout);
  assert.ok(command, `the demo prints the cairn show command:\n${result.stdout}`);
  const bin = fileURLToPath(new URL('../../../packages/cli/src/bin.ts', import.meta.url));
  const shown = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@cairn/source', bin, ...(command[1] as string).split(' ')], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /^order \S+\nstatus\s+COMPLETED after/m);
  assert.match(shown.stdout, /^pack parcel\s+1 abandoned\s/m);
});
