// The pre-deploy check (issue 27, parts 3 and 5): the issue's `signup` scenario, a check that only
// reads, and exported runs replayed as regression tests.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkWorkflowCode, defineEvent, defineWorkflow, type WorkflowDefinition } from '@cairn/core';
import { exportRun } from '@cairn/core/backend';
import { replayHistory, replayHistoryFolder } from '@cairn/core/testing';
import { createFixture, rejectsWithCode, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

const confirmed = defineEvent<{ ok: boolean }>('confirmed');

function signup(build: 'old' | 'patched' | 'unguarded', version = '1'): WorkflowDefinition<{ email: string }, string> {
  return defineWorkflow(
    'signup',
    async (ctx, input: { email: string }) => {
      let email = input.email;
      if (build === 'unguarded' || (build === 'patched' && ctx.patched('normalise-email')))
        email = await ctx.step('normalise email', () => email.toLowerCase());
      const account = await ctx.step('create account', () => `acct:${email}`);
      await ctx.waitForEvent(confirmed);
      return account;
    },
    { version },
  );
}

describe('checkWorkflowCode', () => {
  it('the signup scenario: 5 suspended runs diverge from the unguarded build (naming the new call) and fit the patched one, which then completes them', async () => {
    let fx = await createFixture({ workflows: [signup('old')] });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const h = await fx.engine.startRun(signup('old'), { email: `U${i}@X.IO` });
        await waitForIdle(fx.inner, h.id);
        ids.push(h.id);
      }
      const before = fx.counter.calls.length;
      const unguarded = await checkWorkflowCode({ store: fx.store, workflows: [signup('unguarded')] });
      assert.equal(unguarded.checked, 5);
      assert.deepEqual(unguarded.counts, { compatible: 0, diverges: 5, 'missing-version': 0, unreadable: 0 });
      for (const run of unguarded.runs) {
        assert.equal(run.divergence?.reason, 'different-call');
        assert.equal(run.divergence?.called?.key, 'normalise email');
        assert.equal(run.divergence?.recorded?.key, 'create account');
        assert.equal(run.divergence?.seq, 0);
      }
      const patched = await checkWorkflowCode({ store: fx.store, workflows: [signup('patched')] });
      assert.deepEqual(patched.counts, { compatible: 5, diverges: 0, 'missing-version': 0, unreadable: 0 });
      const writes = fx.counter.calls.slice(before).filter((call) => call.write);
      assert.deepEqual(writes, [], 'the check only reads');
      // The prediction holds: resumed by the patched build, all five complete.
      await fx.engine.stop();
      fx = await createFixture({ workflows: [signup('patched')], counter: fx.counter, clock: fx.clock });
      for (const id of ids) await fx.engine.sendEvent(id, confirmed, { ok: true });
      for (const [i, id] of ids.entries()) {
        const run = await waitForStatus(fx.inner, id, ['completed', 'failed']);
        assert.equal(run.status, 'completed', JSON.stringify(run.error));
        assert.equal(run.output, `acct:U${i}@X.IO`);
      }
      // Ended runs are checked only on request (`recent`).
      assert.equal((await checkWorkflowCode({ store: fx.store, workflows: [signup('patched')] })).checked, 0);
      assert.equal((await checkWorkflowCode({ store: fx.store, workflows: [signup('unguarded')], recent: 3 })).counts.diverges, 3);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a run pinned to a version the candidate build lacks is missing-version; bad options are INVALID_INPUT', async () => {
    const fx = await createFixture({ workflows: [signup('old', 'v1')] });
    try {
      const h = await fx.engine.startRun(signup('old', 'v1'), { email: 'a' });
      await waitForIdle(fx.inner, h.id);
      const report = await checkWorkflowCode({ store: fx.store, workflows: [signup('old', 'v2')] });
      assert.deepEqual(
        report.runs.map((r) => [r.runId, r.verdict]),
        [[h.id, 'missing-version']],
      );
      await rejectsWithCode(checkWorkflowCode({ store: fx.store, workflows: [] }), 'INVALID_INPUT');
      await rejectsWithCode(checkWorkflowCode({ store: fx.store, workflows: [signup('old', 'v1'), signup('patched', 'v1')] }), 'INVALID_INPUT');
      await rejectsWithCode(checkWorkflowCode({ store: fx.store, workflows: [signup('old', 'v1')], recent: -1 }), 'INVALID_INPUT');
    } finally {
      await fx.engine.stop();
    }
  });

  it('an exported run replays as a regression test: compatible with its code, diverging from a change, refused when it is not an export', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-export-'));
    const fx = await createFixture({ workflows: [signup('old')] });
    try {
      const h = await fx.engine.startRun(signup('old'), { email: 'A' });
      await waitForIdle(fx.inner, h.id);
      const doc = await exportRun(fx.store, h.id);
      assert.equal(doc.format, 'cairn.run-history');
      const file = join(dir, 'signup-1.json');
      await writeFile(file, JSON.stringify(doc));
      assert.equal((await replayHistory(file, [signup('old')])).verdict, 'compatible');
      const diverged = await replayHistory(file, [signup('unguarded')]);
      assert.equal(diverged.verdict, 'diverges');
      assert.equal(diverged.divergence?.called?.key, 'normalise email');
      assert.equal((await replayHistory(JSON.parse(JSON.stringify(doc)), [signup('patched')])).verdict, 'compatible');
      assert.deepEqual(
        (await replayHistoryFolder(dir, [signup('unguarded')])).map((v) => v.verdict),
        ['diverges'],
      );
      await rejectsWithCode(replayHistory({ format: 'other' }, [signup('old')]), 'INVALID_INPUT');
      await rejectsWithCode(replayHistory({ ...doc, formatVersion: 99 }, [signup('old')]), 'INVALID_INPUT');
      await rejectsWithCode(replayHistory(join(dir, 'missing.json'), [signup('old')]), 'INVALID_INPUT');
      await rejectsWithCode(exportRun(fx.store, 'no-such-run'), 'RUN_NOT_FOUND');
    } finally {
      await fx.engine.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
