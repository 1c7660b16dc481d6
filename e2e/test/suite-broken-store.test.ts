import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { BrokenStoreName } from './fixtures/broken-stores.js';

const e2e = fileURLToPath(new URL('..', import.meta.url));

/** Runs the CLI on a harness file with TAP output; resolves with its exit code and failing test names. */
function runCli(harness: string, only: string[], env: Record<string, string> = {}): Promise<{ code: number; failed: string[]; output: string }> {
  const args = ['--import', 'tsx', '--conditions=@cairn/source', 'src/cli.ts', harness, '--only', only.join(','), '--reporter', 'tap'];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: e2e, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      if (code === -1) return reject(error);
      // Leaf tests are indented under their suites; suites' own "not ok" lines are left out.
      const failed = [...stdout.matchAll(/^ {8}not ok \d+ - (.+)$/gm)].map((m) => m[1]!.trim());
      resolve({ code, failed, output: `${stdout}\n${stderr}` });
    });
  });
}

/** Each deliberate bug, the groups that must catch it, and cases that must fail by name. */
const BUGS: ReadonlyArray<{ store: BrokenStoreName; only: string[]; mustFail: string[] }> = [
  {
    store: 'claim-check-then-act',
    only: ['store.runs', 'adversarial.racing-claimers'],
    mustFail: ['claim: of 8 concurrent claimers exactly one wins', '8 claimers of each of 10 fresh runs: exactly one wins every time'],
  },
  {
    store: 'step-transition-without-cas',
    only: ['store.steps'],
    mustFail: [
      'transition: a status or attempt mismatch is STEP_CONFLICT and writes nothing',
      'transition: of 8 concurrent identical transitions exactly one succeeds',
    ],
  },
  {
    store: 'state-read-modify-write',
    only: ['store.state', 'adversarial.concurrent-state'],
    mustFail: ['set: 20 concurrent writes of different keys lose nothing', 'a workflow setting 25 keys at once through Promise.all loses none'],
  },
  {
    store: 'fence-checked-after-write',
    only: ['store.state', 'adversarial.stale-fences'],
    mustFail: ['set: a null fence is allowed; a stale fence is LEASE_LOST and writes nothing', 'a worker whose lease was taken over can write nothing at all'],
  },
  {
    store: 'falsy-output-dropped',
    only: ['store.runs'],
    mustFail: [
      'transition: output 0 round-trips exactly',
      'transition: output false round-trips exactly',
      "transition: output '' round-trips exactly",
      'transition: output null round-trips exactly',
    ],
  },
  {
    store: 'slot-acquire-check-then-act',
    only: ['store.slots'],
    mustFail: ['racing acquires for the last slots, from several store instances, grant exactly the free ones'],
  },
];

describe('the conformance suite fails on broken stores', () => {
  it('passes the intact memory store on the same groups (the control)', async () => {
    const { code, failed, output } = await runCli('test/fixtures/memory.harness.ts', [...new Set(BUGS.flatMap((b) => b.only))]);
    assert.deepEqual(failed, [], output);
    assert.equal(code, 0, output);
  });

  for (const bug of BUGS) {
    it(`fails on a store with the bug "${bug.store}", naming the cases that caught it`, async () => {
      const { code, failed, output } = await runCli('test/fixtures/broken.harness.ts', bug.only, { CAIRN_BROKEN_STORE: bug.store });
      for (const name of bug.mustFail) assert.ok(failed.includes(name), `"${name}" should have failed; failed: ${JSON.stringify(failed)}\n${output}`);
      assert.equal(code, failed.length, 'the exit code is the number of failed cases');
    });
  }
});
