// engine.versions: what the engines started on a store registered, and an operator's retire /
// activate, which decides the version a fork made without the workflow's code (the CLI) runs on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';

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
