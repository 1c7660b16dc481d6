// `cairn doctor` against SQLite (embedded: also runs under Node 22 in `test:embedded`): stuck runs
// written as crashed processes leave them, then the real executable reports them, repairs what a
// CLI can, and exits with the documented codes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DoctorReport } from '@cairn/core';
import { openSqliteStore } from '@cairn/kysely';
import { EXIT } from '../src/exit-codes.js';
import { assertNoRawControls } from './support/cli-cases.js';
import { runCairn } from './support/run-cairn.js';
import { seedStuckRuns, type StuckRuns } from './support/seed-stuck-runs.js';

describe('cairn doctor on SQLite', () => {
  let dir = '';
  let url = '';
  let stuck: StuckRuns;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-cli-doctor-'));
    url = `sqlite:${join(dir, 'cairn.sqlite')}`;
    const store = await openSqliteStore(join(dir, 'cairn.sqlite'), { migrate: true });
    try {
      const clean = await runCairn(['doctor', '--url', url]);
      assert.equal(clean.code, EXIT.ok, clean.stderr);
      assert.match(clean.stdout, /No problems found\./);
      stuck = await seedStuckRuns(store);
    } finally {
      await store.close();
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reports each stuck run with what it means, and exits 5 while problems remain', async () => {
    const result = await runCairn(['doctor', '--url', url]);
    assert.equal(result.code, EXIT.problems, result.stderr);
    assertNoRawControls(result, 'cairn doctor');
    for (const [code, id] of [
      ['lease-expired', stuck.expired],
      ['run-not-dispatched', stuck.undispatched],
      ['parent-not-woken', stuck.parent],
      ['version-unregistered', stuck.unregistered],
      ['event-wait-unbounded', stuck.forever],
    ] as const) {
      assert.match(result.stdout, new RegExp(`^(ERROR|WARNING) +${code}  run ${id}$`, 'm'), `${code} of ${id}:\n${result.stdout}`);
    }
    assert.match(result.stdout, /^5 findings, 5 remain \(4 errors\)\.\nRun cairn doctor --fix to repair the 3 fixable ones\.$/m);
    assert.match(result.stderr, /5 problems remain/);
  });

  it('--json prints the report; --fix from a CLI with no workers wakes the parent and says why it dispatches nothing', async () => {
    const json = await runCairn(['doctor', '--url', url, '--json']);
    assert.equal(json.code, EXIT.problems);
    const report = JSON.parse(json.stdout) as DoctorReport;
    assert.equal(report.findings.length, 5);
    assert.equal(report.remaining, 5);
    assert.equal(report.fix, false);

    const fixed = JSON.parse((await runCairn(['doctor', '--url', url, '--fix', '--json'])).stdout) as DoctorReport;
    const outcome = Object.fromEntries(fixed.findings.map((f) => [f.code, f.fixed]));
    assert.deepEqual(outcome, {
      'lease-expired': false,
      'run-not-dispatched': false,
      'parent-not-woken': true,
      'version-unregistered': undefined,
      'event-wait-unbounded': undefined,
    });
    assert.match(fixed.findings.find((f) => f.code === 'run-not-dispatched')?.action ?? '', /runs no workers/);
    assert.equal(fixed.remaining, 4);

    const store = await openSqliteStore(join(dir, 'cairn.sqlite'), { migrate: false });
    try {
      const parent = await store.runs.get(stuck.parent);
      assert.ok(parent?.wakeAt !== undefined && parent.wakeAt <= Date.now(), 'the parent is due now');
    } finally {
      await store.close();
    }
    const again = await runCairn(['doctor', '--url', url]);
    assert.equal(again.code, EXIT.problems);
    assert.doesNotMatch(again.stdout, /parent-not-woken/);
    assert.match(again.stdout, /^4 findings, 4 remain/m);
  });

  it('--limit caps the reads and says so; a bad --limit is a usage error', async () => {
    const capped = await runCairn(['doctor', '--url', url, '--limit', '1']);
    assert.equal(capped.code, EXIT.problems);
    assert.match(capped.stdout, /Not everything was read/);
    const bad = await runCairn(['doctor', '--url', url, '--limit', '0']);
    assert.equal(bad.code, EXIT.usage);
    const help = await runCairn(['doctor', '--help']);
    assert.equal(help.code, EXIT.ok);
    assert.match(help.stdout, /^Usage: cairn doctor/m);
    assert.match(help.stdout, /Exit codes: 0 nothing remains/);
  });
});
