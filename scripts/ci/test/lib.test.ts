// The functions of .ci/lib, run by bash as .ci/run runs them: the timing table (also on failure),
// jobs side by side (each log whole, failures named, really concurrent) and the Node 22 tree copy.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';

const LIB = resolve(import.meta.dirname, '../../../.ci/lib');
const work = mkdtempSync(join(tmpdir(), 'cairn-ci-lib-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** Runs `script` in bash with .ci/lib's timing.sh and jobs.sh sourced, under `set -euo pipefail` as .ci/run does. */
function bash(script: string, env: Record<string, string> = {}): { status: number | null; out: string } {
  const full = `set -euo pipefail\nsource ${LIB}/timing.sh\nsource ${LIB}/jobs.sh\n${script}`;
  const result = spawnSync('bash', ['-c', full], { encoding: 'utf8', env: { ...process.env, TMPDIR: work, ...env }, timeout: 60_000 });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

/** The lines of the timing table (between "=== [ci] timings" and the total). */
function table(out: string): string[] {
  const lines = out.split('\n');
  const start = lines.indexOf('=== [ci] timings');
  assert.notEqual(start, -1, `no timing table in:\n${out}`);
  const end = lines.findIndex((l, i) => i > start && /total \(load at the end/.test(l));
  return lines.slice(start + 1, end + 1).map((l) => l.replace(/^\s*\d+s\s+/, ''));
}

describe('.ci/lib/timing.sh', () => {
  it('prints every phase and the total when the run succeeds, and says OK', () => {
    const { status, out } = bash('trap ci_exit_trap EXIT\nphase one\nphase two\necho inside-two');
    assert.equal(status, 0);
    assert.deepEqual(
      table(out).map((l) => l.replace(/\(load at the end .*\)/, '')),
      ['one', 'two', 'total '],
    );
    assert.match(out, /=== \[ci\] OK/);
    assert.match(out, /=== \[ci\] one \(load [\d.]+ [\d.]+ [\d.]+\)/);
  });

  it('prints the table on failure too, runs ci_before_summary first and keeps the exit status', () => {
    const { status, out } = bash('ci_before_summary() { echo cleanup-ran; }\ntrap ci_exit_trap EXIT\nphase one\nphase failing\nfalse\nphase never');
    assert.equal(status, 1);
    assert.deepEqual(
      table(out).map((l) => l.replace(/\(load at the end .*\)/, '')),
      ['one', 'failing', 'total '],
    );
    assert.ok(out.indexOf('cleanup-ran') < out.indexOf('=== [ci] timings'), out);
    assert.match(out, /=== \[ci\] FAILED \(exit 1\)/);
    assert.doesNotMatch(out, /never/);
  });

  it('a run stopped by TERM says FAILED (exit 143), not OK', () => {
    const { status, out } = bash('ci_traps\nphase one\nkill -TERM $$\nsleep 5\nphase never');
    assert.equal(status, 143, out);
    assert.match(out, /=== \[ci\] FAILED \(exit 143\)/);
    assert.doesNotMatch(out, /never/);
  });

  it('keeps an exit status other than 1', () => {
    const { status, out } = bash('trap ci_exit_trap EXIT\nphase one\nexit 7');
    assert.equal(status, 7);
    assert.match(out, /FAILED \(exit 7\)/);
  });
});

describe('.ci/lib/jobs.sh', () => {
  it('runs jobs side by side: two jobs that each wait for the other finish', () => {
    // Sequential jobs would each wait for a file the other has not written yet and time out.
    const dir = mkdtempSync(join(work, 'meet-'));
    const { status, out } = bash(`
meet() { touch "${dir}/$1"; for _ in $(seq 1 100); do [ -e "${dir}/$2" ] && { echo "$1 met $2"; return 0; }; sleep 0.1; done; echo "$1 waited alone"; return 1; }
phase together
jobs_start "job a" meet a b
jobs_start "job b" meet b a
jobs_wait
echo "failed: \${#JOBS_FAILED[@]}"
ci_summary 0`);
    assert.equal(status, 0, out);
    assert.match(out, /a met b/);
    assert.match(out, /b met a/);
    assert.match(out, /failed: 0/);
    const lines = table(out);
    assert.equal(lines[0], 'together');
    assert.deepEqual(lines.slice(1, 3).sort(), ['| job a', '| job b']);
  });

  it('names every failed job, prints each log whole, and returns non-zero', () => {
    const { status, out } = bash(`
noisy() { for i in 1 2 3; do echo "$1 line $i"; done; return "$2"; }
phase mixed
jobs_start "good one" noisy good 0
jobs_start "bad one" noisy bad 3
jobs_start "bad two" noisy worse 5
st=0; jobs_wait || st=$?
echo "status $st, failed: \${JOBS_FAILED[*]}"
ci_summary 0`);
    assert.equal(status, 0, out);
    assert.match(out, /status 1, failed: /);
    const failed = /failed: (.*)/.exec(out)?.[1] ?? '';
    assert.deepEqual(failed.split(/(?<=one|two) /).sort(), ['bad one', 'bad two']);
    // Each log is printed in one piece, under its job's header.
    for (const [name, word] of [
      ['good one', 'good'],
      ['bad one', 'bad'],
      ['bad two', 'worse'],
    ] as const) {
      assert.match(out, new RegExp(`=== \\[ci\\] \\| ${name}: output\\n${word} line 1\\n${word} line 2\\n${word} line 3\\n`));
    }
    assert.match(out, /\| bad one: FAILED \(exit 3\)/);
    assert.match(out, /\| bad two: FAILED \(exit 5\)/);
    assert.match(out, /\| good one: ok in \d+s/);
    assert.deepEqual(table(out).slice(1, 4).sort(), ['| bad one (FAILED)', '| bad two (FAILED)', '| good one']);
  });

  it('keeps what a job exports inside that job', () => {
    const { status, out } = bash(`
set_path() { export CAIRN_CI_JOB_VAR=inside; echo "job sees $CAIRN_CI_JOB_VAR"; }
jobs_start "exports" set_path
jobs_wait
echo "script sees \${CAIRN_CI_JOB_VAR:-nothing}"`);
    assert.equal(status, 0, out);
    assert.match(out, /job sees inside/);
    assert.match(out, /script sees nothing/);
  });
});

describe('.ci/lib/node.sh: node22_tree', () => {
  it('copies the checkout without .git, node_modules, dist and .turbo, then installs there', () => {
    const root = join(work, 'checkout');
    const bin = join(work, 'bin');
    for (const d of ['.git', 'node_modules/x', 'packages/a/src', 'packages/a/dist', 'packages/a/node_modules/y', '.turbo', 'tools/bin']) {
      mkdirSync(join(root, d), { recursive: true });
    }
    writeFileSync(join(root, 'package.json'), '{}');
    writeFileSync(join(root, 'packages/a/src/index.ts'), 'export {};');
    writeFileSync(join(root, 'packages/a/dist/index.js'), '');
    writeFileSync(join(root, 'tools/bin/runner'), 'binary');
    mkdirSync(bin);
    // A stand-in for pnpm that records where it was called and with what.
    writeFileSync(join(bin, 'pnpm'), `#!/bin/sh\necho "$(pwd) $*" >> ${work}/pnpm-calls\n`);
    chmodSync(join(bin, 'pnpm'), 0o755);
    const dest = join(work, 'tree22');
    const { status, out } = bash(`ROOT=${root}\nCACHE=${work}/cache\nsource ${LIB}/node.sh\nnode22_tree ${dest}`, { PATH: `${bin}:${process.env.PATH}` });
    assert.equal(status, 0, out);
    assert.ok(existsSync(join(dest, 'packages/a/src/index.ts')));
    assert.equal(readFileSync(join(dest, 'tools/bin/runner'), 'utf8'), 'binary');
    for (const gone of ['.git', 'node_modules', 'packages/a/dist', 'packages/a/node_modules', '.turbo']) {
      assert.equal(existsSync(join(dest, gone)), false, `${gone} was copied`);
    }
    assert.equal(readFileSync(join(work, 'pnpm-calls'), 'utf8'), `${dest} install --frozen-lockfile --prefer-offline\n`);
  });
});

describe('.ci/lib/jobs.sh: job_step', () => {
  it('times each step of a job and lists it under the job, failed steps marked, the job failing with them', () => {
    const { status, out } = bash(`
two_steps() { local st=0; job_step "first" true || st=1; job_step "second" false || st=1; return "$st"; }
phase steps
jobs_start "in a row" two_steps
jobs_start "alone" true
jobs_wait || true
ci_summary 0`);
    assert.equal(status, 0, out);
    const lines = table(out);
    const job = lines.indexOf('| in a row (FAILED)');
    assert.notEqual(job, -1, lines.join('\n'));
    assert.deepEqual(lines.slice(job + 1, job + 3), ['|   first', '|   second (FAILED)']);
    assert.match(out, /=== \[ci\] \| step: second: FAILED \(exit 1\) in \d+s/);
  });
});
