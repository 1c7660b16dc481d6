import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const bench = fileURLToPath(new URL('..', import.meta.url));
const committed = join(bench, 'results', 'latest.json');
// A results file written by the bench of 2026-12-02, kept as it was: older files must still render.
const older = join(bench, 'test', 'fixtures', 'results-2026-12-02.json');
const tmp = mkdtempSync(join(tmpdir(), 'cairn-bench-render-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** `pnpm bench --render=<file>` as a user runs it, without pnpm: the exit code and what it printed. */
function render(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--conditions=@cairn/source', 'src/main.ts', `--render=${file}`],
      { cwd: bench },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Writes `results` to a file of its own and returns its path. */
function saved(name: string, results: unknown): string {
  const path = join(tmp, name);
  writeFileSync(path, JSON.stringify(results));
  return path;
}

describe('bench --render', () => {
  it('renders the committed bench/results/latest.json whole', async () => {
    const { code, stdout, stderr } = await render(committed);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^## Cairn benchmark \(full\)/);
    for (const section of ['### Sequential inline steps', '### Engine CPU per inline step', '### PostgreSQL against its physical floor', '### Targets']) {
      assert.ok(stdout.includes(section), `'${section}' is missing`);
    }
    assert.equal(stdout.includes('omitted'), false, 'the bench that wrote it reads every field it has');
  });

  it('renders a file written by an older bench, naming what it leaves out', async () => {
    const { code, stdout, stderr } = await render(older);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^## Cairn benchmark \(full\)/);
    assert.match(stdout, /### Sequential inline steps/);
    assert.match(stdout, /### Targets/);
    // Its latency sections predate `readsPerResult`: omitted, and the report says so.
    assert.match(stdout, /latency of PostgreSQL omitted: the file has no latency\.readsPerResult/);
  });

  it('renders a file missing the optional sections, omitting exactly those', async () => {
    const full = JSON.parse(readFileSync(committed, 'utf8')) as Record<string, unknown> & { backends: Record<string, unknown>[] };
    const {
      floor: _floor,
      processThroughput: _p,
      fairness: _f,
      storeDispatch: _d,
      observability: _o,
      targets: _t,
      notes: _n,
      errors: _e,
      skipped: _s,
      ...rest
    } = full;
    const partial = {
      ...rest,
      backends: full.backends.map(({ replay: _r, latency: _l, localThroughput: _lt, errors: _be, incidents: _i, ...backend }) => backend),
    };
    const { code, stdout, stderr } = await render(saved('partial.json', partial));
    assert.equal(code, 0, stderr);
    assert.match(stdout, /### Sequential inline steps/);
    assert.match(stdout, /≤ 1 round trip per inline step/);
    for (const absent of [
      '### Replay cost',
      '### Result latency',
      '### PostgreSQL against its physical floor',
      '### Queued throughput',
      '### Fairness',
      'omitted',
    ]) {
      assert.equal(stdout.includes(absent), false, `'${absent}' is in the report`);
    }
  });

  it('renders the pre-deploy check section and its targets', async () => {
    // A `--scenarios=check` run on PostgreSQL (docs/benchmarks.md, "The pre-deploy check").
    const { code, stdout, stderr } = await render(join(bench, 'results', 'check-2026-12-07-1.json'));
    assert.equal(code, 0, stderr);
    assert.match(stdout, /### Pre-deploy check: `checkWorkflowCode` over in-flight runs of 50 recorded steps/);
    assert.match(stdout, /\| PostgreSQL \| 10,000 \| /);
    assert.match(stdout, /pre-deploy check of 10,000 in-flight runs × 50 recorded steps ≤ 15 s \| PostgreSQL/);
    assert.match(stdout, /live heap of the streamed check/);
    assert.equal(stdout.includes('omitted'), false);
    // A check section without a field the report reads is left out, and the report says so.
    const results = JSON.parse(readFileSync(join(bench, 'results', 'check-2026-12-07-1.json'), 'utf8')) as { backends: { check: Record<string, unknown> }[] };
    delete results.backends[0]!.check['replayCpuUsPerRun'];
    const partial = await render(saved('check-partial.json', results));
    assert.equal(partial.code, 0, partial.stderr);
    assert.equal(partial.stdout.includes('### Pre-deploy check'), false);
    assert.match(partial.stdout, /check of PostgreSQL omitted: the file has no check\.replayCpuUsPerRun/);
  });

  it('a file that is no bench result fails with a message, not a stack trace', async () => {
    const { code, stderr } = await render(saved('other.json', { hello: 'world' }));
    assert.equal(code, 1);
    assert.match(stderr, /is not a bench results file: it has no mode/);
    assert.doesNotMatch(stderr, /at .*\.ts:\d+/);
  });
});
