import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseBenchArgs } from '../src/args.js';

const bench = fileURLToPath(new URL('..', import.meta.url));

/** `pnpm bench <args>` as CI runs it, without pnpm: the exit code and what it printed. */
function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', '--conditions=@cairn/source', 'src/main.ts', ...args], { cwd: bench }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('bench command line', () => {
  it('a misspelled flag exits 2 with the usage, before measuring anything', async () => {
    const { code, stdout, stderr } = await run('--smok');
    assert.equal(code, 2, stderr);
    assert.match(stderr, /Unknown option '--smok'/);
    assert.match(stderr, /Usage: pnpm bench \[--smoke\]/);
    assert.doesNotMatch(stderr, /setting up/);
    assert.equal(stdout, '');
  });

  it('--help prints the usage and exits 0', async () => {
    const { code, stdout } = await run('--help');
    assert.equal(code, 0);
    assert.match(stdout, /Usage: pnpm bench \[--smoke\]/);
  });

  it('rejects an unknown flag, a value where none belongs, a positional argument and an unknown backend or scenario', () => {
    assert.throws(() => parseBenchArgs(['--smoke', '--scenario=inline']), /Unknown option '--scenario'/);
    assert.throws(() => parseBenchArgs(['--smoke=yes']), /--smoke/);
    assert.throws(() => parseBenchArgs(['--smoke', 'inline']), /Unexpected argument 'inline'/);
    assert.throws(() => parseBenchArgs(['--out']), /--out <value>' argument missing/);
    assert.throws(() => parseBenchArgs(['--only=postgress']), /--only: unknown backend 'postgress'; known: memory, sqlite, postgres, mysql, mongodb, redis/);
    assert.throws(
      () => parseBenchArgs(['--scenarios', 'inline,replays']),
      /--scenarios: unknown scenario 'replays'; known: inline, replay, wake, latency, local, idle, cpu, flow, floor, processes, dispatch, results, fairness, observability/,
    );
  });

  it('reads every flag the docs and CI use, in both --flag=value and --flag value forms', () => {
    assert.deepEqual(parseBenchArgs([]), { help: false, smoke: false });
    assert.deepEqual(parseBenchArgs(['--smoke']), { help: false, smoke: true });
    assert.deepEqual(parseBenchArgs(['--only=postgres,redis', '--scenarios=processes']), {
      help: false,
      smoke: false,
      only: ['postgres', 'redis'],
      scenarios: ['processes'],
    });
    assert.deepEqual(parseBenchArgs(['--only', 'memory', '--scenarios', 'floor,inline', '--out', 'x.json']), {
      help: false,
      smoke: false,
      only: ['memory'],
      scenarios: ['floor', 'inline'],
      out: 'x.json',
    });
    assert.deepEqual(parseBenchArgs(['--scenarios=processes', '--workers=1,8']), { help: false, smoke: false, scenarios: ['processes'], workers: [1, 8] });
    assert.throws(() => parseBenchArgs(['--workers=1,two']), /--workers: 'two' is not a worker count/);
    assert.deepEqual(parseBenchArgs(['--render']), { help: false, smoke: false, render: true });
    assert.deepEqual(parseBenchArgs(['--render=results/a.json', '--out=b.json']), { help: false, smoke: false, out: 'b.json', render: 'results/a.json' });
  });
});
