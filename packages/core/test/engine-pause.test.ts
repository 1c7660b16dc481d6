import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, it } from 'node:test';
import { aesGcmCodec, CAIRN_CHANNELS, CairnError, createEngine, createMemoryStore, defineWorkflow, type RunLifecycleEvent } from '@cairn/core';
import { countingStore } from '@cairn/core/backend';

const until = async (what: () => boolean | Promise<boolean>, label: string) => {
  for (let i = 0; i < 1000 && !(await what()); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(await what(), `${label}: not reached`);
};

describe('engine.pause and engine.resume', () => {
  it('publish run.paused, run.suspended (paused) and run.unpaused once per change, and the run ends as an unpaused one', async () => {
    const events: RunLifecycleEvent[] = [];
    const onRun = (message: unknown) => void events.push(message as RunLifecycleEvent);
    subscribe(CAIRN_CHANNELS.run, onRun);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wf = defineWorkflow('pause-events', async (ctx) => {
      const a = await ctx.step('a', async () => {
        await gate;
        return 1;
      });
      const b = await ctx.step('b', () => 2);
      return a + b;
    });
    const engine = createEngine({ store: createMemoryStore(), workflows: [wf] });
    await engine.start();
    try {
      const handle = await engine.startRun(wf, null);
      await until(async () => (await engine.getRun(handle.id))?.status === 'running', 'the run executes');
      assert.equal((await engine.pause(handle.id, { reason: 'why not' })).changed, true);
      assert.equal((await engine.pause(handle.id)).changed, false);
      release();
      await until(async () => (await engine.getRun(handle.id))?.status === 'waiting', 'the run suspends');
      assert.deepEqual(
        (await engine.steps(handle.id)).map((s) => s.key),
        ['a'],
      );
      await engine.resume(handle.id);
      assert.equal(await handle.result(), 3);
      const mine = events.filter((e) => e.runId === handle.id);
      const paused = mine.filter((e) => e.type === 'run.paused');
      assert.equal(paused.length, 1);
      assert.deepEqual(
        paused.map((e) => e.type === 'run.paused' && [e.scope, e.reason]),
        [['run', 'why not']],
      );
      const suspended = mine.find((e) => e.type === 'run.suspended');
      assert.deepEqual(suspended?.type === 'run.suspended' && suspended.reasons, ['paused']);
      assert.equal(mine.filter((e) => e.type === 'run.unpaused').length, 1);
      assert.deepEqual(
        mine.map((e) => e.type),
        ['run.created', 'run.started', 'run.paused', 'run.suspended', 'run.unpaused', 'run.resumed', 'run.completed'],
      );
    } finally {
      unsubscribe(CAIRN_CHANNELS.run, onRun);
      await engine.stop();
    }
  });

  it('refuses with PAUSE_UNSUPPORTED on a store without pauses, writing nothing', async () => {
    const store = countingStore(createMemoryStore(), { without: ['pauses'] });
    const wf = defineWorkflow('pause-unsupported', async () => 'done');
    const engine = createEngine({ store, workflows: [wf] });
    const handle = await engine.startRun(wf, null);
    store.reset();
    for (const call of [
      () => engine.pause(handle.id),
      () => engine.resume(handle.id),
      () => engine.pauseWorkflow(wf.name),
      () => engine.resumeWorkflow(wf.name),
      () => engine.listWorkflowPauses(),
    ]) {
      await assert.rejects(call(), (error: unknown) => CairnError.is(error, 'PAUSE_UNSUPPORTED'));
    }
    assert.deepEqual(store.writes(), []);
  });

  it('passes pauses through a payload codec, decoding the run it returns', async () => {
    const wf = defineWorkflow('pause-codec', async (ctx) => {
      await ctx.sleep('nap', '1h');
      return 'done';
    });
    const codec = aesGcmCodec({ keys: { k1: Buffer.alloc(32, 7) }, current: 'k1' });
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [wf], codec });
    const handle = await engine.startRun(wf, { secret: 'input' });
    const { run } = await engine.pause(handle.id);
    assert.deepEqual(run.input, { secret: 'input' }, 'the run comes back decoded');
    assert.ok(run.paused);
    assert.notDeepEqual((await store.runs.get(handle.id))?.input, { secret: 'input' }, 'the store holds the envelope');
  });
});
