import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createEngine } from '@cairn/core';
import type { DoctorFinding } from '@cairn/core/backend';
import { scriptsFor } from '../src/scripts/index.js';
import { crashBefore } from './support/crash-before.js';
import { keysOf, skip, withStore } from './support/fixture.js';
import { newRun, T0 } from './support/runs.js';

const split = scriptsFor('split');
const NOW = T0 + 1_000;

const codes = (findings: DoctorFinding[]) => findings.map((f) => `${f.code} ${f.runId}`).sort();

/**
 * The Redis store's own doctor hook: drift between run hashes and the global indexes, made the way
 * it happens — a process dying between a run write and its index write (cluster mode) — then
 * reported, repaired with `fix`, and gone on a second pass.
 */
describe('redis doctor: index drift', { skip }, () => {
  it('a healthy store, in either mode, reports nothing', async () => {
    for (const cluster of [false, true]) {
      await withStore({ cluster }, async ({ store }) => {
        const { run } = await store.runs.create(newRun({ wakeAt: T0, idempotencyKey: 'k' }), T0);
        await store.runs.create(newRun(), T0);
        await store.runs.delete(run.id);
        assert.deepEqual(await store.doctor!({ fix: false, now: NOW, limit: 100 }), { findings: [], truncated: [] });
        for (const bad of [{ fix: 'yes', now: NOW, limit: 1 }, { fix: true, now: NOW, limit: 0 }, { fix: true, now: Number.NaN, limit: 1 }, null]) {
          await assert.rejects(store.doctor!(bad as never), (error: unknown) => CairnError.is(error, 'INVALID_INPUT'), JSON.stringify(bad));
        }
      });
    }
  });

  it('an interrupted delete leaves index entries and an idempotency key without a run: reported, removed by fix', async () => {
    await withStore({ cluster: true }, async ({ store, client, prefix }) => {
      const gone = (await store.runs.create(newRun({ wakeAt: T0, idempotencyKey: 'once' }), T0)).run;
      const heal = crashBefore(client, [split.forgetRun.sha]);
      assert.equal(await store.runs.delete(gone.id), true);
      heal();
      const report = await store.doctor!({ fix: false, now: NOW, limit: 100 });
      assert.deepEqual(codes(report.findings), [`redis.idempotency-dangling ${gone.id}`, `redis.index-dangling ${gone.id}`]);
      assert.ok(report.findings.every((f) => f.fixable && f.fixed === undefined));
      assert.equal(await client.zscore(`{${prefix}}:runs`, gone.id), String(T0), 'a read-only pass changes nothing');

      const fixed = await store.doctor!({ fix: true, now: NOW, limit: 100 });
      assert.deepEqual(codes(fixed.findings), codes(report.findings));
      assert.ok(fixed.findings.every((f) => f.fixed === true && typeof f.action === 'string'));
      for (const key of await keysOf(client, prefix)) {
        const type = await client.type(key);
        if (type === 'zset') assert.equal(await client.zscore(key, gone.id), null, key);
        if (type === 'hash' && key.startsWith(`{${prefix}}`)) assert.equal(Object.values(await client.hgetall(key)).includes(gone.id), false, key);
      }
      assert.deepEqual(await store.doctor!({ fix: false, now: NOW, limit: 100 }), { findings: [], truncated: [] });
    });
  });

  it('an interrupted create leaves a run no index lists: reported through engine.doctor, indexed (and its key claimed) by fix', async () => {
    await withStore({ cluster: true }, async ({ store, client }) => {
      const heal = crashBefore(client, [split.claimCreated.sha]);
      await assert.rejects(store.runs.create(newRun({ wakeAt: T0, idempotencyKey: 'lost' }), T0));
      heal();
      assert.deepEqual((await store.runs.list({})).runs, [], 'invisible to listings');
      assert.deepEqual(await store.runs.findDue(NOW, 10), [], 'and to recovery');
      const engine = createEngine({ store, workflows: [] });
      const report = await engine.doctor({ now: NOW });
      assert.equal(report.findings.length, 1);
      const [finding] = report.findings;
      assert.equal(finding?.code, 'redis.run-unindexed');
      assert.equal(finding?.severity, 'error');
      const id = finding?.runId as string;

      const fixed = await engine.doctor({ now: NOW, fix: true });
      assert.deepEqual(
        fixed.findings.map((f) => [f.code, f.fixed]),
        [['redis.run-unindexed', true]],
      );
      assert.deepEqual(
        (await store.runs.list({})).runs.map((r) => r.id),
        [id],
      );
      assert.deepEqual(await store.runs.findDue(NOW, 10), [{ id, workflow: 'wf', reason: 'wake' }]);
      const again = await store.runs.create(newRun({ idempotencyKey: 'lost' }), NOW);
      assert.deepEqual([again.created, again.run.id], [false, id], 'the key is held again');
      // The run is due (and not dispatched: no workers), which is the engine checks' business, not drift.
      const after = await engine.doctor({ now: NOW });
      assert.deepEqual(
        after.findings.filter((f) => f.code.startsWith('redis.')),
        [],
      );
      await engine.stop();
    });
  });

  it('an interrupted index write leaves the indexes recording an old status: reported, re-recorded by fix', async () => {
    await withStore({ cluster: true }, async ({ store, client }) => {
      const { run } = await store.runs.create(newRun({ wakeAt: T0 }), T0);
      const heal = crashBefore(client, [split.syncIndex.sha]);
      const claimed = await store.runs.claim(run.id, 'w1', 60_000, T0 + 1);
      await store.runs.transition(run.id, claimed!.fence, { from: ['running'], to: 'waiting' }, T0 + 2);
      heal();
      const report = await store.doctor!({ fix: true, now: NOW, limit: 100 });
      assert.deepEqual(codes(report.findings), [`redis.index-stale ${run.id}`]);
      assert.match(report.findings[0]?.message ?? '', /as pending due at .* but the run is waiting/);
      assert.equal(report.findings[0]?.fixed, true);
      assert.deepEqual(
        (await store.runs.list({ status: 'waiting' })).runs.map((r) => r.id),
        [run.id],
      );
      assert.deepEqual(await store.doctor!({ fix: false, now: NOW, limit: 100 }), { findings: [], truncated: [] });
    });
  });

  it('every walk is capped at limit, and a capped walk is named in truncated', async () => {
    await withStore({ cluster: true }, async ({ store, client }) => {
      const heal = crashBefore(client, [split.forgetRun.sha]);
      for (let i = 0; i < 3; i++) await store.runs.delete((await store.runs.create(newRun(), T0)).run.id);
      heal();
      const capped = await store.doctor!({ fix: false, now: NOW, limit: 1 });
      assert.ok(capped.findings.length < 3, JSON.stringify(capped.findings));
      assert.ok(capped.truncated.length > 0);
      assert.equal((await store.doctor!({ fix: false, now: NOW, limit: 100 })).findings.length, 3);
    });
  });
});
