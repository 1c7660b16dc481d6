import assert from 'node:assert/strict';
import { CairnError, defineWorkflow, type Json } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from '../engine/engine-world.js';

/** An object as ordinary TypeScript builds it: optional properties left `undefined`, and an `undefined` item. */
const withUndefined = (fields: Record<string, unknown>): Json => ({ ...fields, note: undefined, tags: ['a', undefined] }) as unknown as Json;
/** What JSON.stringify makes of it: the property left out, the item `null`. */
const asJson = (fields: Record<string, Json>): Json => ({ ...fields, tags: ['a', null] });

/** Adversarial: `undefined` inside payloads, at every boundary, as JSON.stringify treats it. */
export const undefinedInPayloadsGroup: CaseGroup = caseGroup('adversarial.undefined-in-payloads', 'adversarial: undefined inside payloads', [
  conformanceCase(
    'undefined properties are left out and undefined array items become null: workflow input and output, step output, state, event payload, child input and output, error data',
    async (env) => {
      const seen: Array<[string, unknown]> = [];
      const kid = defineWorkflow('undefined-kid', async (_ctx, input: Json) => withUndefined({ echo: input }));
      const wf = defineWorkflow('undefined-everywhere', async (ctx, input: Json) => {
        seen.push(['input', input]);
        seen.push(['step', await ctx.step('load', () => withUndefined({ id: 7 }))]);
        await ctx.setState('s', withUndefined({ kept: 1 }));
        seen.push(['state', await ctx.state('s')]);
        seen.push(['child', await ctx.child(kid, withUndefined({ to: 'kid' }))]);
        seen.push(['event', await ctx.waitForEvent('go')]);
        const failure = await ctx
          .step(
            'fails',
            () => {
              throw new CairnError('INVALID_INPUT', 'declined', { data: withUndefined({ reason: 'card' }) });
            },
            { retries: 0 },
          )
          .catch((error: unknown) => ((error as Error).cause as CairnError).data);
        seen.push(['error data', failure]);
        await ctx.sleep('nap', '1m'); // one more replay, reading everything back from the store
        return withUndefined({ done: true });
      });
      // About the replay: every wake replays (a kept execution would resume without one, decision 64).
      const w = await engineWorld(env, [wf, kid], { stickyExecutions: false });
      const handle = await w.engine.startRun(wf, withUndefined({ order: 1 }));
      await w.runUntil('the run waits for its event', async () =>
        (await w.raw.steps.load(handle.id)).some((s) => s.kind === 'event' && s.status === 'waiting'),
      );
      await w.engine.sendEvent(handle.id, 'go', withUndefined({ by: 'ops' }));
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'completed', `${run.status}: ${run.error?.message}`);

      const expected: Record<string, Json> = {
        input: asJson({ order: 1 }),
        step: asJson({ id: 7 }),
        state: asJson({ kept: 1 }),
        child: asJson({ echo: asJson({ to: 'kid' }) }),
        event: asJson({ by: 'ops' }),
        'error data': asJson({ reason: 'card' }),
      };
      for (const [what, value] of Object.entries(expected)) {
        const values = seen.filter(([name]) => name === what).map(([, v]) => v);
        assert.ok(values.length >= 2, `${what}: seen by the first execution and a replay (${values.length} times)`);
        for (const v of values) assert.deepStrictEqual(v, value, `${what} as the workflow saw it`);
      }

      // Read back from the store directly.
      assert.deepStrictEqual(run.input, expected.input, 'stored input');
      assert.deepStrictEqual(run.output, asJson({ done: true }), 'stored output');
      assert.deepStrictEqual(await handle.result(), asJson({ done: true }), 'result()');
      const steps = await w.raw.steps.load(handle.id);
      assert.deepStrictEqual(steps.find((s) => s.key === 'load')?.output, expected.step, 'stored step output');
      assert.deepStrictEqual(steps.find((s) => s.key === 'fails')?.error?.data, expected['error data'], 'stored error data');
      assert.deepStrictEqual(await w.raw.state.get(handle.id), { s: expected.state }, 'stored state');
      assert.deepStrictEqual((await w.raw.events.get(handle.id, 'go', 1))?.payload, expected.event, 'stored event payload');
      const childRunId = steps.find((s) => s.kind === 'child')?.childRunId;
      assert.ok(childRunId !== undefined, 'the child step names its run');
      const child = await w.raw.runs.get(childRunId);
      assert.deepStrictEqual(child?.input, asJson({ to: 'kid' }), 'stored child input');
      assert.deepStrictEqual(child?.output, expected.child, 'stored child output');
    },
  ),
]);
