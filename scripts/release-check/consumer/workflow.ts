// Shared by both consumer programs: a workflow that uses the engine the way an application does
// (steps, a retried step, a durable sleep, an event, state), plus checks a wrong build would fail.
// Copied next to main.ts in the temporary consumer project; it resolves @cairn/* from the
// installed tarballs there, never from the workspace.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { CairnError, createEngine, defineWorkflow } from '@cairn/core';
import { decodeRunCursor, encodeRunCursor, type Queue, type WorkflowStore } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';

export const greet = defineWorkflow('greet', async (ctx, input: { name: string }) => {
  const greeting = await ctx.step('compose', () => `hello, ${input.name}`);
  const attempts = await ctx.step(
    'flaky',
    (step) => {
      if (step.attempt < 2) throw new Error('transient failure');
      return step.attempt;
    },
    { retries: 2, backoff: { type: 'fixed', delay: '10ms' } },
  );
  await ctx.sleep('pause', '20ms');
  await ctx.setState('phase', 'waiting');
  const approval = await ctx.waitForEvent<{ ok: boolean }>('approve', { timeout: '30s' });
  return { greeting, attempts, approved: approval.ok };
});

/** Runs `greet` to completion on `store` (through `queue` when given) and checks what the engine recorded. */
export async function runGreet(store: WorkflowStore, label: string, queue?: Queue): Promise<void> {
  const engine = createEngine({ store, workflows: [greet], ...(queue ? { queue } : {}) });
  await engine.start();
  try {
    const run = await engine.startRun(greet, { name: label });
    // The types flow from the workflow definition through the published .d.ts files: if they
    // degraded to `any`, these @ts-expect-error lines would themselves be errors.
    // @ts-expect-error `name` must be a string
    if (false as boolean) await engine.startRun(greet, { name: 42 });
    const waitForEvent = async () => {
      for (;;) {
        const steps = await engine.steps(run.id);
        if (steps.some((s) => s.status === 'waiting' && s.key.includes('approve'))) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await waitForEvent();
    assert.deepEqual(await engine.sendEvent(run.id, 'approve', { ok: true }), { delivered: true, duplicate: false, seq: 1 });
    const result = await run.result({ timeout: '30s' });
    // @ts-expect-error `result.greeting` is a string
    const wrong: number = result.greeting;
    void wrong;
    assert.deepEqual(result, { greeting: `hello, ${label}`, attempts: 2, approved: true });
    assert.equal((await engine.getRun(run.id))?.status, 'completed');
    assert.deepEqual(await engine.state(run.id), { phase: 'waiting' });
    const flaky = (await engine.history(run.id)).filter((h) => h.stepName === 'flaky').map((h) => h.status);
    assert.deepEqual(flaky, ['failed', 'succeeded']);
  } finally {
    await engine.stop();
  }
  // Errors are the package's own class, and the testing and backend subpath exports load.
  assert.ok(CairnError.is(new CairnError('RUN_NOT_FOUND', 'x'), 'RUN_NOT_FOUND'));
  assert.equal(typeof new ManualClock().now(), 'number');
  // The backend authors' entry point ships too.
  assert.deepEqual(decodeRunCursor(encodeRunCursor({ createdAt: 1, id: 'r' })), { createdAt: 1, id: 'r' });
  // `./package.json` is exported (tools read versions through it).
  const require = createRequire(import.meta.url);
  const core = require('@cairn/core/package.json') as { name: string; version: string };
  assert.equal(core.name, '@cairn/core');
}
