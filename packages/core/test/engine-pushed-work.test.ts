// engine.pushed: the entry points a push handler (@cairn/http) runs work through, in a process
// that runs no workers: one run until it suspends or its budget nears, one queued step, the due runs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import { countingStore } from '@cairn/core/backend';

describe('engine.pushed', () => {
  it('executeOnce runs a run until it suspends, and a budget that nears stops it at the next primitive, due at once; each body runs once', async () => {
    const bodies: string[] = [];
    const wf = defineWorkflow('pushed-long', async (ctx, n: number) => {
      let sum = 0;
      for (let i = 0; i < n; i++)
        sum += await ctx.step(`s${i}`, async () => {
          bodies.push(`s${i}`);
          await new Promise((r) => setTimeout(r, 2));
          return i;
        });
      return sum;
    });
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [wf] });
    const run = await engine.startRun(wf, 40);
    const outcomes: string[] = [];
    for (let push = 0; push < 1000; push++) {
      const result = await engine.pushed.executeOnce(run.id, { deadline: Date.now() + 25 });
      outcomes.push(result.status);
      if (result.status !== 'continue') break;
      assert.ok(result.wakeAt !== undefined && result.wakeAt <= Date.now(), 'a run stopped by its budget is due at once');
    }
    assert.equal(outcomes.at(-1), 'completed');
    assert.ok(outcomes.length > 2, `the budget split the run over several pushes (${outcomes.join(',')})`);
    assert.deepEqual(
      bodies,
      Array.from({ length: 40 }, (_, i) => `s${i}`),
    );
    assert.equal((await engine.getRun(run.id))?.output, 780);
    // A push for an ended run claims nothing and runs nothing.
    assert.equal((await engine.pushed.executeOnce(run.id, { deadline: Date.now() + 1000 })).status, 'skipped');
    assert.equal(bodies.length, 40);
  });

  it('a deadline that passes between the claim and the replay still ends the push, with the run due at once', async () => {
    const wf = defineWorkflow('pushed-late', async (ctx) => ctx.step('a', () => 1));
    // The history read takes longer than the whole budget: the budget is over before the replay starts.
    const store = countingStore(createMemoryStore(), {
      around: async (call, forward, args) => {
        if (call.method === 'steps.load') await new Promise((r) => setTimeout(r, 40));
        return forward(...args);
      },
    });
    const engine = createEngine({ store, workflows: [wf] });
    const run = await engine.startRun(wf, null);
    const late = await engine.pushed.executeOnce(run.id, { deadline: Date.now() + 10 });
    assert.equal(late.status, 'continue');
    assert.deepEqual(await engine.steps(run.id), []);
    assert.equal((await engine.pushed.executeOnce(run.id, { deadline: Date.now() + 5000 })).status, 'completed');
  });

  it('executeOnce reports a waiting run with its wake time, and a run held by another claim as skipped', async () => {
    const wf = defineWorkflow('pushed-sleep', async (ctx) => {
      await ctx.step('a', () => 1);
      await ctx.sleep('nap', '1h');
      return 2;
    });
    const store = createMemoryStore();
    const engine = createEngine({ store, workflows: [wf] });
    const run = await engine.startRun(wf, null);
    const before = Date.now();
    const waiting = await engine.pushed.executeOnce(run.id, { deadline: Date.now() + 5000 });
    assert.equal(waiting.status, 'waiting');
    assert.ok(waiting.wakeAt !== undefined && waiting.wakeAt >= before + 3_600_000);
    // Claimed elsewhere (another process's lease): this push claims nothing.
    await store.runs.wake(run.id, Date.now());
    await store.runs.claim(run.id, 'someone-else', 60_000, Date.now());
    assert.equal((await engine.pushed.executeOnce(run.id, { deadline: Date.now() + 5000 })).status, 'skipped');
  });

  it('a queued step dispatched during executeOnce is handed back, not sent to a queue, and executeStep runs it once', async () => {
    let runs = 0;
    const wf = defineWorkflow('pushed-queued', async (ctx) => {
      const v = await ctx.step(
        'q',
        () => {
          runs++;
          return 7;
        },
        { queued: true },
      );
      return v + 1;
    });
    const engine = createEngine({ store: createMemoryStore(), workflows: [wf] });
    const run = await engine.startRun(wf, null);
    const first = await engine.pushed.executeOnce(run.id, { deadline: Date.now() + 5000 });
    assert.equal(first.status, 'waiting');
    assert.equal(first.steps.length, 1);
    const job = first.steps[0]?.job;
    assert.ok(job);
    assert.equal(job.key.length > 0, true);
    await engine.pushed.executeStep(job);
    await engine.pushed.executeStep(job); // the same push again: the attempt started once
    assert.equal(runs, 1);
    assert.equal((await engine.pushed.executeOnce(run.id, { deadline: Date.now() + 5000 })).status, 'completed');
    assert.equal(await engine.result(run.id), 8);
  });

  it('dueRuns lists what is due, and bad arguments are refused before the store is touched', async () => {
    const wf = defineWorkflow('pushed-due', async () => 1);
    const store = countingStore(createMemoryStore());
    const engine = createEngine({ store, workflows: [wf] });
    const run = await engine.startRun(wf, null);
    assert.deepEqual(
      (await engine.pushed.dueRuns(10)).map((r) => r.id),
      [run.id],
    );
    store.reset();
    for (const bad of [
      () => engine.pushed.executeOnce('', { deadline: Date.now() }),
      () => engine.pushed.executeOnce(run.id, { deadline: Number.NaN }),
      () => engine.pushed.executeOnce(run.id, {} as { deadline: number }),
      () => engine.pushed.executeStep({ runId: run.id } as never),
      () => engine.pushed.dueRuns(0),
    ]) {
      await assert.rejects(bad, (error: unknown) => CairnError.is(error, 'INVALID_INPUT'));
    }
    assert.deepEqual(store.calls, []);
  });
});
