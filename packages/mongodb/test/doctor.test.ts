import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CairnError, createEngine } from '@cairn/core';
import { createMongoStore, type MongoStore } from '../src/index.js';
import type { Collection } from 'mongodb';
import type { RunDoc } from '../src/documents.js';
import { createRun } from './support/fixtures.js';
import { freshDb, skipReason } from './support/server.js';

const NOW = 10_000;
const clean = { findings: [], truncated: [] };

/** A store on a fresh database, with its runs collection for the raw writes a test makes. */
async function setup(): Promise<{ store: MongoStore; runs: Collection<RunDoc> }> {
  const db = freshDb();
  const store = createMongoStore({ db });
  await store.init();
  return { store, runs: db.collection<RunDoc>(store.collections.runs) };
}

// The MongoDB store's doctor hook: what it keeps beside the run records (indexes, `dueAt`).
test('mongodb doctor: a healthy store reports nothing', { skip: skipReason }, async () => {
  const { store } = await setup();
  const run = await createRun(store, 1000, { wakeAt: 2000 });
  await store.runs.claim(run.id, 'w', 30_000, 1500);
  await createRun(store, 1000);
  assert.deepEqual(await store.doctor!({ fix: false, now: NOW, limit: 100 }), clean);
  for (const bad of [{ fix: 'yes', now: NOW, limit: 1 }, { fix: true, now: NOW, limit: 1.5 }, undefined]) {
    await assert.rejects(store.doctor!(bad as never), (error: unknown) => CairnError.is(error, 'INVALID_INPUT'), JSON.stringify(bad));
  }
});

test('mongodb doctor: a dropped index is reported, and fix creates it again', { skip: skipReason }, async () => {
  const { store, runs } = await setup();
  await runs.dropIndex('cairn_due');
  const report = await store.doctor!({ fix: false, now: NOW, limit: 100 });
  assert.deepEqual(
    report.findings.map((f) => [f.code, f.severity, f.fixable]),
    [['mongodb.index-missing', 'error', true]],
  );
  assert.match(report.findings[0]?.message ?? '', /cairn_due/);
  const fixed = await store.doctor!({ fix: true, now: NOW, limit: 100 });
  assert.deepEqual(
    fixed.findings.map((f) => [f.code, f.fixed]),
    [['mongodb.index-missing', true]],
  );
  assert.ok((await runs.listIndexes().toArray()).some((index) => index.name === 'cairn_due'));
  assert.deepEqual(await store.doctor!({ fix: false, now: NOW, limit: 100 }), clean);
});

test('mongodb doctor: a dropped slot index is reported, and fix creates it again', { skip: skipReason }, async () => {
  const db = freshDb();
  const store = createMongoStore({ db });
  await store.init();
  const waiters = db.collection('cairn_slot_waiters');
  await waiters.dropIndex('cairn_slot_line');
  const report = await store.doctor!({ fix: false, now: NOW, limit: 100 });
  assert.deepEqual(
    report.findings.map((f) => [f.code, f.severity, f.fixable]),
    [['mongodb.index-missing', 'error', true]],
  );
  assert.match(report.findings[0]?.message ?? '', /cairn_slot_waiters lacks index cairn_slot_line/);
  const fixed = await store.doctor!({ fix: true, now: NOW, limit: 100 });
  assert.deepEqual(
    fixed.findings.map((f) => [f.code, f.fixed]),
    [['mongodb.index-missing', true]],
  );
  assert.ok((await waiters.listIndexes().toArray()).some((index) => index.name === 'cairn_slot_line'));
  assert.deepEqual(await store.doctor!({ fix: false, now: NOW, limit: 100 }), clean);
});

test('mongodb doctor: a run whose dueAt disagrees with its record is reported through engine.doctor, and fix sets it', { skip: skipReason }, async () => {
  const { store, runs } = await setup();
  // A document as an older release (before dueAt) or a hand edit leaves it: due, but invisible to findDue.
  const lost = await createRun(store, 1000, { wakeAt: 2000 });
  await runs.updateOne({ _id: lost.id }, { $unset: { dueAt: '' } });
  // And a finished run still carrying a due time.
  const done = await store.runs.claim((await createRun(store, 1000, { wakeAt: 2000 })).id, 'w', 30_000, 1500);
  await store.runs.transition(done!.id, done!.fence, { from: ['running'], to: 'completed', output: 1 }, 1600);
  await runs.updateOne({ _id: done!.id }, { $set: { dueAt: 1600 } });
  assert.deepEqual(await store.runs.findDue(NOW, 10), []);

  const engine = createEngine({ store, workflows: [] });
  const report = await engine.doctor({ now: NOW, thresholds: { overdueMs: 60_000 } });
  assert.deepEqual(report.findings.map((f) => `${f.code} ${f.runId}`).sort(), [`mongodb.due-drift ${done!.id}`, `mongodb.due-drift ${lost.id}`].sort());
  const fixed = await engine.doctor({ now: NOW, fix: true, thresholds: { overdueMs: 60_000 } });
  assert.ok(
    fixed.findings.every((f) => f.fixed === true),
    JSON.stringify(fixed.findings),
  );
  assert.deepEqual(await store.runs.findDue(NOW, 10), [{ id: lost.id, workflow: 'wf', reason: 'wake' }]);
  assert.equal((await runs.findOne({ _id: done!.id }))?.dueAt, undefined);
  assert.deepEqual((await engine.doctor({ now: NOW, thresholds: { overdueMs: 60_000 } })).findings, []);
  await engine.stop();
});
