// `cairn check`, `cairn export` and the divergence in `cairn show` against one real store: the
// issue's signup scenario (5 runs of the deployed build suspended on their event), checked against
// candidate builds in test/fixtures, each command run as a child process.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunExport, RunVerdict, WorkflowStore } from '@cairn/core/backend';
import { replayHistory } from '@cairn/core/testing';
import { signup } from '../fixtures/signup-deployed.js';
import { signup as unguarded } from '../fixtures/signup-unguarded.js';
import { assertNoRawControls, type CliTarget } from './cli-cases.js';
import { runCairn } from './run-cairn.js';
import { seedDivergedSignup, seedSignups } from './seed-signups.js';

const UNGUARDED = 'test/fixtures/signup-unguarded.ts';
const PATCHED = 'test/fixtures/signup-patched.mjs';
// Nothing answers there: a command that opened the store would fail with exit 1, not 2.
const DEAD_URL = 'postgres://127.0.0.1:1/cairn';

/** What the store holds of each run, to show that a check wrote nothing. */
async function snapshot(store: WorkflowStore, ids: readonly string[]): Promise<string> {
  const out = [];
  for (const id of ids) out.push([await store.runs.get(id), await store.steps.load(id)]);
  return JSON.stringify(out);
}

export function checkCases(target: CliTarget): void {
  describe(`cairn check and export on ${target.name}`, { skip: target.skip ?? false }, () => {
    let store: WorkflowStore;
    let ids: string[];
    let base: string[];
    let scratch = '';
    const cairn = (...args: string[]) => runCairn([...base, ...args]);

    before(async () => {
      const { url, args } = await target.setup();
      base = ['--url', url, ...args];
      store = await target.open();
      ids = await seedSignups(store, 5);
      scratch = mkdtempSync(join(tmpdir(), 'cairn-cli-check-'));
    });
    after(async () => {
      await store?.close();
      await target.teardown();
      rmSync(scratch, { recursive: true, force: true });
    });

    it('the signup scenario: an unguarded new step makes all 5 runs diverge, naming it (exit 1); behind ctx.patched all 5 are compatible (exit 0); the store is only read', async () => {
      const before = await snapshot(store, ids);
      const diverges = await cairn('check', '--workflows', UNGUARDED);
      assert.equal(diverges.code, 1, diverges.stderr);
      assertNoRawControls(diverges, 'cairn check');
      assert.match(diverges.stdout, /^WORKFLOW\s+VERSION\s+RUNS\s+COMPATIBLE\s+DIVERGES\s+MISSING-VERSION\s+UNREADABLE$/m);
      assert.match(diverges.stdout, /^signup\s+1\s+5\s+0\s+5\s+0\s+0$/m);
      for (const id of ids) {
        assert.match(
          diverges.stdout,
          new RegExp(`^${id}\\s+#0\\s+task "create account"\\s+task "normalise email"\\s+test/fixtures/signup-unguarded\\.ts:6:\\d+$`, 'm'),
        );
      }
      assert.match(diverges.stdout, /^5 runs checked: 5 diverging\.$/m);
      assert.match(diverges.stdout, /ctx\.patched\(id\)/);
      assert.match(diverges.stderr, /^error: 5 of 5 runs would not resume on this build \(5 diverging\)$/m);

      const compatible = await cairn('check', '--workflows', PATCHED);
      assert.equal(compatible.code, 0, compatible.stderr);
      assert.match(compatible.stdout, /^signup\s+1\s+5\s+5\s+0\s+0\s+0$/m);
      assert.match(compatible.stdout, /^5 runs checked: 5 compatible\.$/m);
      assert.doesNotMatch(compatible.stdout, /Diverging runs/);
      assert.equal(compatible.stderr, '');
      assert.equal(await snapshot(store, ids), before, 'the check wrote nothing');
    });

    it('--json prints one document: checked and every run with its verdict and divergence', async () => {
      const result = await cairn('check', '--workflows', UNGUARDED, '--json');
      assert.equal(result.code, 1, result.stderr);
      const doc = JSON.parse(result.stdout) as { checked: number; runs: RunVerdict[] };
      assert.deepEqual(Object.keys(doc), ['checked', 'runs']);
      assert.equal(doc.checked, 5);
      assert.deepEqual(doc.runs.map((r) => r.runId).sort(), [...ids].sort());
      for (const run of doc.runs) {
        assert.deepEqual(Object.keys(run), ['runId', 'workflow', 'version', 'status', 'verdict', 'divergence']);
        assert.deepEqual([run.workflow, run.version, run.status, run.verdict], ['signup', '1', 'waiting', 'diverges']);
        assert.equal(run.divergence?.runId, run.runId);
        assert.equal(run.divergence?.reason, 'different-call');
        assert.equal(run.divergence?.seq, 0);
        assert.deepEqual(run.divergence?.recorded, { kind: 'task', key: 'create account', name: 'create account' });
        assert.deepEqual(run.divergence?.called, { kind: 'task', key: 'normalise email', name: 'normalise email' });
        assert.match(run.divergence?.location ?? '', /signup-unguarded\.ts:6:\d+$/);
      }
      const ok = await cairn('check', '--workflows', PATCHED, '--json');
      assert.equal(ok.code, 0, ok.stderr);
      const compatible = JSON.parse(ok.stdout) as { checked: number; runs: RunVerdict[] };
      assert.equal(compatible.checked, 5);
      assert.deepEqual(new Set(compatible.runs.map((r) => r.verdict)), new Set(['compatible']));
    });

    it('export writes the run history document (stdout or --out) that replayHistory replays as compatible with the same code', async () => {
      const id = ids[0] as string;
      const file = join(scratch, 'signup.json');
      const written = await cairn('export', id, '--out', file);
      assert.equal(written.code, 0, written.stderr);
      assert.match(written.stdout, new RegExp(`^Exported run ${id} \\(2 steps\\) to `, 'm'));
      const doc = JSON.parse(readFileSync(file, 'utf8')) as RunExport;
      assert.deepEqual([doc.format, doc.formatVersion, doc.run.id], ['cairn.run-history', 1, id]);
      assert.equal((await replayHistory(file, [signup])).verdict, 'compatible');
      const diverged = await replayHistory(file, [unguarded]);
      assert.equal(diverged.verdict, 'diverges');
      assert.equal(diverged.divergence?.called?.key, 'normalise email');
      const printed = await cairn('export', id);
      assert.equal(printed.code, 0, printed.stderr);
      const fromStdout = JSON.parse(printed.stdout) as RunExport;
      assert.deepEqual({ ...fromStdout, exportedAt: '' }, { ...doc, exportedAt: '' });
    });

    if (!target.thorough) return;

    it('bad modules (missing, failing to load, exporting nothing, two of one version): exit 2 with the reason, before any store is opened', async () => {
      for (const [module, message] of [
        ['test/fixtures/no-such-build.ts', /--workflows test\/fixtures\/no-such-build\.ts: no such file/],
        ['test/fixtures/throws-on-load.mjs', /--workflows test\/fixtures\/throws-on-load\.mjs did not load: SIGNUP_SENDER is not set/],
        ['test/fixtures/no-workflows.ts', /exports no workflow definition/],
        ['test/fixtures/signup-twice.ts', /exports two definitions of workflow signup version 1/],
      ] as const) {
        const result = await runCairn(['check', '--url', DEAD_URL, '--workflows', module]);
        assert.equal(result.code, 2, `${module}: ${result.stderr}`);
        assert.match(result.stderr, message);
        assert.doesNotMatch(result.stderr, /ECONNREFUSED/);
      }
      const none = await cairn('check');
      assert.equal(none.code, 2);
      assert.match(none.stderr, /required option '--workflows <module>'/);
      const recent = await cairn('check', '--workflows', PATCHED, '--recent', '-1');
      assert.equal(recent.code, 2);
    });

    it('a store that does not answer: the connection error, exit 1', async () => {
      const result = await runCairn(['check', '--url', DEAD_URL, '--workflows', PATCHED]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /ECONNREFUSED/);
    });

    it('show prints the divergence of a run failed with NON_DETERMINISM; --recent checks ended runs too', async () => {
      const failed = await seedDivergedSignup(store);
      assert.equal(failed.error?.code, 'NON_DETERMINISM');
      const shown = await cairn('show', failed.id);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /^error\s+NON_DETERMINISM: the code and the run's history part at #0 \(turn 0\)$/m);
      assert.match(shown.stdout, /^ {2}history\s+task "create account"$/m);
      assert.match(shown.stdout, /^ {2}code\s+task "normalise email"$/m);
      // Relative to the current directory (the package), as `cairn check` prints it: an absolute
      // path in a deep checkout was cut to the terminal's width before its line number.
      assert.match(shown.stdout, /^ {2}line\s+test\/fixtures\/signup-unguarded\.ts:6:\d+$/m);
      assert.match(shown.stdout, /^ {2}why\s+the code called task "normalise email"/m);
      assert.match(shown.stdout, /ctx\.patched\(id\)/);

      const inFlight = JSON.parse((await cairn('check', '--workflows', UNGUARDED, '--json')).stdout) as { checked: number };
      assert.equal(inFlight.checked, 5, 'ended runs are not checked by default');
      const withRecent = JSON.parse((await cairn('check', '--workflows', UNGUARDED, '--recent', '1', '--json')).stdout) as { runs: RunVerdict[] };
      assert.deepEqual(
        withRecent.runs.filter((r) => r.status === 'failed').map((r) => [r.runId, r.verdict]),
        [[failed.id, 'diverges']],
      );
    });

    it('export: an unknown run exits 3, an --out in a missing folder exits 2, and neither writes a file', async () => {
      const missing = await cairn('export', 'no-such-run', '--out', join(scratch, 'none.json'));
      assert.equal(missing.code, 3, missing.stderr);
      assert.equal(existsSync(join(scratch, 'none.json')), false);
      const folder = await cairn('export', ids[0] as string, '--out', join(scratch, 'no-folder', 'x.json'));
      assert.equal(folder.code, 2, folder.stderr);
      assert.match(folder.stderr, /no such directory/);
    });
  });
}
