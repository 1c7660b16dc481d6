import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { BrokenQueueName } from './fixtures/broken-queues.js';

const e2e = fileURLToPath(new URL('..', import.meta.url));

/** Runs the queue suite on one broken local queue in a child `node --test`; returns the failing case names. */
function runSuite(bug: BrokenQueueName | undefined, only: string[]): Promise<{ code: number; failed: string[]; output: string }> {
  const args = ['--import', 'tsx', '--conditions=@cairn/source', '--test', '--test-reporter=tap', 'test/fixtures/broken-queue.conformance.ts'];
  const env: NodeJS.ProcessEnv = { ...process.env, CAIRN_CONFORMANCE_ONLY: only.join(',') };
  // Set by the outer test runner; left in place, the child would refuse to run its own tests.
  delete env.NODE_TEST_CONTEXT;
  if (bug === undefined) delete env.CAIRN_BROKEN_QUEUE;
  else env.CAIRN_BROKEN_QUEUE = bug;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: e2e, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      if (code === -1) return reject(error);
      const failed = [...stdout.matchAll(/^ {4}not ok \d+ - (.+)$/gm)].map((m) => m[1]!.trim());
      resolve({ code, failed, output: `${stdout}\n${stderr}` });
    });
  });
}

/** Each deliberate bug and the case that must catch it. */
const BUGS: ReadonlyArray<{ bug: BrokenQueueName; only: string; mustFail: string }> = [
  {
    bug: 'ignores-group-caps',
    only: 'queue.groups',
    // The racing case sees this bug only when completions fall in an unlucky order (CI saw it pass);
    // the case with one group ready sees it at the first fetch.
    mustFail: 'a group at its cap gets no more jobs even when its jobs are the only ones ready',
  },
  { bug: 'retries-throwing-handler', only: 'queue.failures', mustFail: 'a job whose handler throws is not delivered again, and the worker keeps going' },
  { bug: 'ignores-priority', only: 'queue.priority', mustFail: 'among ready jobs a higher priority runs sooner, and equal priorities run in send order' },
  { bug: 'ignores-delay', only: 'queue.delay', mustFail: 'a delayed job is not delivered before its delay; jobs without one are not held behind it' },
  {
    bug: 'ignores-dedupe',
    only: 'queue.dedupe.while-queued',
    mustFail: 'a send whose dedupe key is held by a queued job (ready or delayed) does nothing; keyless sends never dedupe',
  },
  {
    bug: 'dedupes-while-running',
    only: 'queue.dedupe.after-start',
    mustFail: 'once its job has started (or finished) a dedupe key is free: the next send is delivered',
  },
  { bug: 'delivers-twice', only: 'queue.delivery.exactly-once', mustFail: 'every job is delivered exactly once to the workers sharing a queue name' },
  {
    bug: 'sorts-json-keys',
    only: 'queue.delivery.json-round-trip',
    mustFail: 'payloads come back exactly as a JSON round trip leaves them; non-JSON payloads are refused',
  },
];

describe('the queue conformance suite fails on broken queues', () => {
  it('passes the intact local queue on the same cases (the control)', async () => {
    const { code, failed, output } = await runSuite(
      undefined,
      BUGS.map((b) => b.only),
    );
    assert.deepEqual(failed, [], output);
    assert.equal(code, 0, output);
  });

  for (const { bug, only, mustFail } of BUGS) {
    it(`fails on a queue that ${bug.replaceAll('-', ' ')}`, async () => {
      const { code, failed, output } = await runSuite(bug, [only]);
      assert.notEqual(code, 0, output);
      assert.ok(failed.includes(mustFail), `expected "${mustFail}" to fail; failed: ${JSON.stringify(failed)}\n${output.slice(-3000)}`);
    });
  }
});
