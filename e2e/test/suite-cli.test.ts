import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const e2e = fileURLToPath(new URL('..', import.meta.url));

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--conditions=@cairn/source', 'src/cli.ts', ...args],
      { cwd: e2e, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('cairn-conformance CLI', () => {
  it('--help prints the usage and exits 0', async () => {
    const { code, stdout } = await cli('--help');
    assert.equal(code, 0);
    assert.match(stdout, /Usage: cairn-conformance <harness-file>/);
  });

  it('a missing file or a bad option exits 2 with a message', async () => {
    const missing = await cli('test/fixtures/does-not-exist.ts');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no such file/);
    const bad = await cli('test/fixtures/memory.harness.ts', '--frobnicate');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Unknown option '--frobnicate'/);
  });

  it('a misspelled flag, a flag without its value or a second harness exits 2 with the usage, running nothing', async () => {
    for (const [args, message] of [
      [['test/fixtures/memory.harness.ts', '--onyl', 'store.versions'], /Unknown option '--onyl'/],
      [['test/fixtures/memory.harness.ts', '--reporter=spec', '--seeds=3', '--seed'], /Option '--seed <value>' argument missing/],
      [['test/fixtures/memory.harness.ts', 'test/fixtures/memory.harness.ts'], /Only one harness file/],
    ] as const) {
      const { code, stdout, stderr } = await cli(...args);
      assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
      assert.match(stderr, message);
      assert.match(stderr, /Usage: cairn-conformance <harness-file>/);
      assert.doesNotMatch(stdout, /passed/);
    }
  });

  it('a file whose default export is not a harness fails, saying why', async () => {
    const { code, stdout, stderr } = await cli('test/fixtures/not-a-harness.ts');
    assert.notEqual(code, 0);
    assert.match(`${stdout}${stderr}`, /must default-export a ConformanceHarness/);
  });

  it('a passing harness exits 0 and prints the backend, its source and the counts', async () => {
    const { code, stdout } = await cli('test/fixtures/memory.harness.ts', '--only', 'store.versions');
    assert.equal(code, 0, stdout);
    assert.match(stdout, /conformance memory \(in-process memory store from @cairn\/core\): 8 passed, 0 failed, 0 skipped/);
    assert.match(stdout, /cairn-conformance: 8 passed, 0 failed, 0 skipped/);
  });

  it('--seed replays one simulation seed verbosely; a bad seed exits 2', async () => {
    const { code, stdout } = await cli('test/fixtures/memory.harness.ts', '--only', 'adversarial.simulation', '--seed', '7');
    assert.equal(code, 0, stdout);
    assert.match(stdout, /simulation seed 7: /);
    assert.match(stdout, /simulation: seeds=1 wrong=0 doubleRun=0 lost=0 stuck=0/);
    const bad = await cli('test/fixtures/memory.harness.ts', '--seeds', '0');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--seeds needs an integer of at least 1/);
  });

  it('--sticky runs the suite with kept executions on, off or evicted at random; another value exits 2', async () => {
    const { code, stdout } = await cli('test/fixtures/memory.harness.ts', '--only', 'adversarial.simulation', '--seed', '3', '--sticky', 'evict');
    assert.equal(code, 0, stdout);
    assert.match(stdout, /simulation: seeds=1 wrong=0 doubleRun=0 lost=0 stuck=0/);
    const bad = await cli('test/fixtures/memory.harness.ts', '--sticky', 'sometimes');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--sticky must be on, off or evict, got "sometimes"/);
  });

  it('a backend whose setup reports it unavailable is skipped case by case, with the reason', async () => {
    const { code, stdout } = await cli('test/fixtures/unavailable.harness.ts', '--only', 'store.versions', '--reporter', 'tap');
    assert.equal(code, 0, stdout);
    assert.equal([...stdout.matchAll(/# SKIP unavailable unavailable: no server in this test/g)].length, 8);
    assert.match(stdout, /conformance unavailable \(unavailable: no server in this test\): 0 passed, 0 failed, 8 skipped/);
  });
});
