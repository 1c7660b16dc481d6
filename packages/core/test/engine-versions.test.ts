// engine.versions: what the engines started on a store registered, and an operator's retire /
// activate, which decides the version a fork made without the workflow's code (the CLI) runs on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createEngine, createMemoryStore, defineWorkflow, type Engine, type ErrorCode } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';

const quiet = { warn: () => {}, error: () => {} };
const v1 = defineWorkflow('billing', async (ctx) => ctx.step('charge', () => 'v1'));
const v2 = defineWorkflow('billing', async (ctx) => ctx.step('charge', () => 'v2'), { version: 'v2' });

describe('engine.versions', () => {
  it('lists the registered versions oldest first, gets one, and retires / activates it', async () => {
    const store = createMemoryStore();
    const old = createEngine({ store, workflows: [v1], logger: quiet });
    await old.start();
    await old.stop();
    const current = createEngine({ store, workflows: [v2], logger: quiet });
    await current.start();
    await current.stop();

    const cli = createEngine({ store, workflows: [], logger: quiet });
    const listed = await cli.versions.list('billing');
    assert.deepEqual(
      listed.map((v) => [v.version, v.status]),
      [
        ['1', 'active'],
        ['v2', 'active'],
      ],
    );
    assert.equal((await cli.versions.get('billing', 'v2'))?.version, 'v2');
    assert.equal(await cli.versions.get('billing', 'v9'), undefined);
    assert.deepEqual(await cli.versions.list('nothing'), []);

    const retired = await cli.versions.setStatus('billing', 'v2', 'retired');
    assert.equal(retired.status, 'retired');
    assert.equal((await store.versions.get('billing', 'v2'))?.status, 'retired');
    // Idempotent, and undone by 'active'.
    assert.equal((await cli.versions.setStatus('billing', 'v2', 'retired')).status, 'retired');
    assert.equal((await cli.versions.setStatus('billing', 'v2', 'active')).status, 'active');
    // A later start of an engine with the version keeps the operator's status.
    await cli.versions.setStatus('billing', 'v2', 'retired');
    const again = createEngine({ store, workflows: [v2], logger: quiet });
    await again.start();
    await again.stop();
    assert.equal((await store.versions.get('billing', 'v2'))?.status, 'retired');
  });

  it('a fork made without the workflow code runs on the newest active version: retiring one changes it', async () => {
    const store = createMemoryStore();
    const worker1 = createEngine({ store, workflows: [v1], logger: quiet });
    await worker1.start();
    const run = await worker1.startRun(v1, undefined);
    assert.equal(await run.result({ timeout: '10s' }), 'v1');
    await worker1.stop();
    const worker2 = createEngine({ store, workflows: [v2], logger: quiet });
    await worker2.start();
    await worker2.stop();

    const cli = createEngine({ store, workflows: [], logger: quiet });
    assert.equal((await store.runs.get((await cli.forkRun(run.id, { fromStep: 'charge' })).id))?.version, 'v2');
    await cli.versions.setStatus('billing', 'v2', 'retired');
    assert.equal((await store.runs.get((await cli.forkRun(run.id, { fromStep: 'charge' })).id))?.version, '1');
  });

  it('refuses bad input with INVALID_INPUT and an unregistered version with VERSION_NOT_FOUND, writing nothing', async () => {
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [v1], logger: quiet });
    await engine.start();
    await engine.stop();
    const before = await store.versions.list('billing');
    for (const call of [
      () => engine.versions.list(42 as unknown as string),
      () => engine.versions.list(''),
      () => engine.versions.get('billing', undefined as unknown as string),
      () => engine.versions.setStatus('billing', '1', 'deleted' as unknown as 'retired'),
      () => engine.versions.setStatus('billing', 'x'.repeat(101), 'retired'),
    ]) {
      await assert.rejects(call(), (error: unknown) => CairnError.is(error, 'INVALID_INPUT'));
    }
    await assert.rejects(engine.versions.setStatus('billing', 'v9', 'retired'), (error: unknown) => CairnError.is(error, 'VERSION_NOT_FOUND'));
    assert.deepEqual(await store.versions.list('billing'), before);
    assert.equal(await store.versions.get('billing', 'v9'), undefined);
  });
});

const isCode = (code: ErrorCode) => (error: unknown) => CairnError.is(error, code);
const runIds = async (store: WorkflowStore) => (await store.runs.list({ workflow: 'billing', limit: 1000 })).runs.map((r) => r.id);

/** `fn` with a started engine of billing 1 and v2 on a fresh memory store, stopped afterwards. */
async function withBilling(fn: (engine: Engine, store: WorkflowStore) => Promise<void>): Promise<void> {
  const store = createMemoryStore();
  const engine = createEngine({ store, workflows: [v1, v2], logger: quiet });
  await engine.start();
  try {
    await fn(engine, store);
  } finally {
    await engine.stop();
  }
}

describe('retired versions take no new starts', () => {
  it('startRun on a retired version is refused; the default goes to the newest active one; every one retired is VERSION_RETIRED with nothing written', () =>
    withBilling(async (engine, store) => {
      await engine.versions.setStatus('billing', 'v2', 'retired');
      const first = await runIds(store);
      await assert.rejects(engine.startRun(v2, undefined, { version: 'v2' }), isCode('VERSION_RETIRED'));
      assert.deepEqual(await runIds(store), first, 'nothing written');
      const defaulted = await engine.startRun(v2, undefined);
      assert.equal((await store.runs.get(defaulted.id))?.version, '1');
      assert.equal(await defaulted.result({ timeout: '10s' }), 'v1');

      await engine.versions.setStatus('billing', '1', 'retired');
      const before = await runIds(store);
      await assert.rejects(engine.startRun('billing', undefined), isCode('VERSION_RETIRED'));
      await assert.rejects(engine.startRun('billing', undefined, { version: '1', idempotencyKey: 'k' }), isCode('VERSION_RETIRED'));
      assert.deepEqual(await runIds(store), before, 'nothing written');

      await engine.versions.setStatus('billing', 'v2', 'active');
      const back = await engine.startRun('billing', undefined);
      assert.equal((await store.runs.get(back.id))?.version, 'v2');
    }));

  it('a fork with the workflow code runs on the newest active version; every version retired is VERSION_RETIRED, nothing written', () =>
    withBilling(async (engine, store) => {
      const run = await engine.startRun(v1, undefined, { version: '1' });
      assert.equal(await run.result({ timeout: '10s' }), 'v1');
      await engine.versions.setStatus('billing', 'v2', 'retired');
      const fork = await engine.forkRun(run.id, { fromStep: 'charge' });
      assert.equal((await store.runs.get(fork.id))?.version, '1');
      await engine.versions.setStatus('billing', '1', 'retired');
      const before = await runIds(store);
      await assert.rejects(engine.forkRun(run.id, { fromStep: 'charge' }), isCode('VERSION_RETIRED'));
      // Without the code (the CLI): the same refusal.
      const cli = createEngine({ store, workflows: [], logger: quiet });
      await assert.rejects(cli.forkRun(run.id, { fromStep: 'charge' }), isCode('VERSION_RETIRED'));
      assert.deepEqual(await runIds(store), before);
    }));
});

describe('engine.versions.summary', () => {
  const held = (version: string) => defineWorkflow('held', async (ctx) => ctx.waitForEvent('go'), version === '1' ? {} : { version });

  it('counts the runs in flight per version, names an unregistered version, and stops at maxRuns', async () => {
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [held('1'), held('2')], logger: quiet });
    await engine.start();
    try {
      const ids: string[] = [];
      // A millisecond apart: runs of one millisecond have no order among themselves.
      for (const version of ['1', '1', '1', undefined]) {
        ids.push((await engine.startRun('held', null, version === undefined ? {} : { version })).id);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      // A run pinned to a version no engine registered (started by a deploy that never started here).
      await store.runs.create(
        { id: '01a250ba-0000-7000-8000-000000000001', workflow: 'held', version: 'ghost', input: null, wakeAt: Date.now() + 3_600_000 },
        Date.now(),
      );
      const summary = await engine.versions.summary('held');
      assert.deepEqual(
        summary.versions.map((v) => [v.version, v.status, v.inFlight, v.oldestInFlight?.runId ?? null]),
        [
          ['1', 'active', 3, ids[0]],
          ['2', 'active', 1, ids[3]],
          ['ghost', 'unregistered', 1, '01a250ba-0000-7000-8000-000000000001'],
        ],
      );
      assert.deepEqual([summary.runsRead, summary.truncated], [5, false]);
      assert.equal(summary.versions[2]?.createdAt, null);
      // Exactly maxRuns in flight: all read, not truncated; one fewer: truncated.
      assert.deepEqual(
        [(await engine.versions.summary('held', { maxRuns: 5 })).truncated, (await engine.versions.summary('held', { maxRuns: 4 })).truncated],
        [false, true],
      );
      for (const bad of [0, 1.5, 100_001, '10']) {
        await assert.rejects(engine.versions.summary('held', { maxRuns: bad as number }), isCode('INVALID_INPUT'));
      }
      await assert.rejects(engine.versions.summary('held', { limit: 3 } as never), isCode('INVALID_INPUT'));
      await assert.rejects(engine.versions.summary(''), isCode('INVALID_INPUT'));
    } finally {
      await engine.stop();
    }
  });
});

describe('retired versions and schedules', () => {
  it('a tick of a workflow whose every version is retired starts nothing (logged) and starts once a version is active again', async () => {
    const store = createMemoryStore();
    const clock = new ManualClock({ start: Date.UTC(2027, 0, 4, 10, 0, 30) });
    const errors: string[] = [];
    const engine = createEngine({
      store,
      clock,
      workflows: [v1],
      recoveryIntervalMs: 400 * 24 * 3_600_000,
      logger: { warn: () => {}, error: (_data, message) => void errors.push(message) },
    });
    await engine.start();
    try {
      await engine.schedules.create({ name: 'hourly', workflow: v1, cron: '0 * * * *' });
      await engine.versions.setStatus('billing', '1', 'retired');
      await clock.set(Date.UTC(2027, 0, 4, 11, 0, 1));
      assert.equal(await engine.schedules.tick(), 0);
      assert.deepEqual((await store.runs.list({ workflow: 'billing' })).runs, []);
      assert.match(errors.join('\n'), /Schedule hourly: pass failed/);
      await engine.versions.setStatus('billing', '1', 'active');
      assert.equal(await engine.schedules.tick(), 1);
      const [run] = (await store.runs.list({ workflow: 'billing' })).runs;
      assert.equal(run?.idempotencyKey, 'schedule:hourly:2027-01-04T11:00:00.000Z', 'the tick that was refused');
    } finally {
      await engine.stop();
    }
  });
});
