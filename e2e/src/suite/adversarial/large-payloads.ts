import assert from 'node:assert/strict';
import { CairnError, defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { payloadOfBytes } from '../fixtures/payloads.js';
import { engineWorld } from '../engine/engine-world.js';

/** Adversarial: payloads at and over the limit through the engine. */
export const largePayloadsGroup: CaseGroup = caseGroup('adversarial.large-payloads', 'adversarial: large payloads through the engine', [
  conformanceCase('input, step output, event payload and run output at the limit survive a replay', async (env) => {
    const big = payloadOfBytes(env.payloadLimit);
    const wf = defineWorkflow('big-payloads', async (ctx, input: unknown) => {
      const copy = await ctx.step('copy', () => input);
      await ctx.setState('big', copy as never);
      const event = await ctx.waitForEvent('big');
      return JSON.stringify(copy) === JSON.stringify(event) ? event : 'mismatch';
    });
    const w = await engineWorld(env, [wf], { maxPayloadBytes: env.payloadLimit });
    const handle = await w.engine.startRun(wf, big);
    await w.runUntil('the run waits for its event', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    await w.engine.sendEvent(handle.id, 'big', big);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed');
    assert.ok(JSON.stringify(run.output) === JSON.stringify(big), 'the output came back different');
    assert.ok(JSON.stringify((await w.engine.state(handle.id)).big) === JSON.stringify(big), 'the state value came back different');
  }),

  conformanceCase('an oversized input is PAYLOAD_TOO_LARGE and writes nothing; an oversized step result fails the step', async (env) => {
    const wf = defineWorkflow('too-big', async (ctx) => {
      try {
        await ctx.step('huge', () => payloadOfBytes(env.payloadLimit + 1));
        return 'stored';
      } catch (error) {
        return CairnError.is(error, 'STEP_FAILED') && CairnError.is(error.cause, 'PAYLOAD_TOO_LARGE') ? 'refused' : `other: ${String(error)}`;
      }
    });
    const w = await engineWorld(env, [wf], { maxPayloadBytes: env.payloadLimit });
    await rejectsWithCode(w.engine.startRun(wf, payloadOfBytes(env.payloadLimit + 1)), 'PAYLOAD_TOO_LARGE');
    assert.deepEqual((await w.raw.runs.list({})).runs, [], 'no run was created');
    const handle = await w.engine.startRun(wf, null);
    assert.equal((await w.runToEnd(handle.id)).output, 'refused');
  }),
]);
