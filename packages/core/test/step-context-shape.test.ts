import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEngine, createMemoryStore, defineWorkflow, type StepContext } from '@cairn/core';

// Issue 18: an untimed attempt's context used to be an object literal with a getter, a new closure
// per step that V8 keeps in a dictionary-mode object with an accessor pair in the old generation
// (which kept each step's garbage alive until a major collection). It is now built with one
// shared getter; these tests hold it to the literal's observable shape.

async function contextsOf(n: number): Promise<StepContext[]> {
  const seen: StepContext[] = [];
  const wf = defineWorkflow('context-shape', async (ctx, count: number) => {
    for (let i = 0; i < count; i++) await ctx.step(`s${i}`, (s) => void seen.push(s));
    return count;
  });
  const engine = createEngine({ store: createMemoryStore(), workflows: [wf], recoveryIntervalMs: 1e12, startMode: 'inline' });
  await engine.start({ workers: false });
  try {
    assert.equal(await (await engine.startRun(wf, n)).result(), n);
    return seen;
  } finally {
    await engine.stop();
  }
}

describe('the step context of an untimed attempt', () => {
  it('has the shape of { runId, key, attempt, get signal() {} }: own keys in order, attributes, prototype', async () => {
    const [context] = await contextsOf(1);
    assert.ok(context);
    assert.equal(Object.getPrototypeOf(context), Object.prototype);
    assert.deepEqual(Reflect.ownKeys(context), ['runId', 'key', 'attempt', 'signal']);
    for (const key of ['runId', 'key', 'attempt']) {
      const d = Object.getOwnPropertyDescriptor(context, key);
      assert.deepEqual(
        { writable: d?.writable, enumerable: d?.enumerable, configurable: d?.configurable },
        { writable: true, enumerable: true, configurable: true },
      );
    }
    const signal = Object.getOwnPropertyDescriptor(context, 'signal');
    assert.equal(typeof signal?.get, 'function');
    assert.equal(signal?.set, undefined);
    assert.equal(signal?.enumerable, true);
    assert.equal(signal?.configurable, true);
    assert.equal(context.key, 's0');
    assert.equal(context.attempt, 1);
    // Spread reads the getter: the copy holds the (settled, hence aborted) signal as data.
    const copy = { ...context };
    assert.ok(copy.signal instanceof AbortSignal);
    assert.equal(copy.signal, context.signal, 'one signal per attempt, made on first read');
    assert.equal(copy.signal.aborted, true);
  });

  it('makes no function per step: every context of a run shares one signal getter', async () => {
    const contexts = await contextsOf(5);
    const getters = new Set(contexts.map((c) => Object.getOwnPropertyDescriptor(c, 'signal')?.get));
    assert.equal(getters.size, 1);
    // Each still reads its own attempt's signal.
    assert.equal(new Set(contexts.map((c) => c.signal)).size, 5);
  });
});
