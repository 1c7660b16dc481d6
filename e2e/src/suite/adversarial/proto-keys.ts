import assert from 'node:assert/strict';
import { CairnError, defineWorkflow, type Json } from '@cairn/core';
import { CONTINUED_AS } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld } from '../engine/engine-world.js';

/**
 * A payload with own properties named `__proto__`, as `JSON.parse` builds them from text a caller
 * sent: at the top, nested (with `null`, a number and an array as values: an assignment would set a
 * null prototype, ignore the number and make the array the prototype), and inside an array.
 */
const withProtoKeys = (label: string): Json =>
  JSON.parse(
    `{"__proto__":{"admin":true},"label":${JSON.stringify(label)},"nested":{"__proto__":null,"deeper":{"__proto__":7}},"list":[{"__proto__":[1,2]}]}`,
  ) as Json;

/** Every boundary checked, then one failure naming all that lost a key (so one run shows every place). */
class Findings {
  readonly failures: string[] = [];
  check(value: unknown, label: string, what: string): void {
    try {
      assertProtoKeysKept(value, label, what);
    } catch (error) {
      this.failures.push(`${what}: ${JSON.stringify(value)}`);
      if (!(error instanceof assert.AssertionError)) throw error;
    }
  }
  done(): void {
    assert.deepStrictEqual(this.failures, [], `own __proto__ properties lost or turned into prototypes at:\n${this.failures.join('\n')}`);
  }
}

/** Fails unless `value` holds every `__proto__` of `withProtoKeys` as an own property, and no object in it has a prototype other than `Object.prototype` (or `Array.prototype`). */
function assertProtoKeysKept(value: unknown, label: string, what: string): void {
  assert.deepStrictEqual(value, withProtoKeys(label), `${what}: the same value, own __proto__ properties included`);
  const walk = (v: unknown, path: string): void => {
    if (typeof v !== 'object' || v === null) return;
    const expected = Array.isArray(v) ? Array.prototype : Object.prototype;
    assert.equal(Object.getPrototypeOf(v), expected, `${what}: the prototype of ${path} is unchanged`);
    for (const key of Object.keys(v)) walk((v as Record<string, unknown>)[key], `${path}[${JSON.stringify(key)}]`);
  };
  walk(value, what);
  const top = value as Record<string, unknown>;
  assert.ok(Object.hasOwn(top, '__proto__'), `${what}: __proto__ is an own property`);
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(top, '__proto__')?.value, { admin: true }, `${what}: its value`);
  const nested = top.nested as Record<string, unknown>;
  assert.ok(Object.hasOwn(nested, '__proto__') && Object.getOwnPropertyDescriptor(nested, '__proto__')?.value === null, `${what}: nested __proto__ null kept`);
}

/** Adversarial: object keys named `__proto__` inside payloads, on every boundary, kept as own properties. */
export const protoKeysGroup: CaseGroup = caseGroup('adversarial.proto-keys', 'adversarial: __proto__ keys inside payloads', [
  conformanceCase(
    'own properties named __proto__ are kept as own properties, never as prototypes: workflow input and output, step output, state (value and key), event payload, child input and output, error data',
    async (env) => {
      const seen: Array<[string, unknown]> = [];
      const kid = defineWorkflow('proto-kid', async (ctx, input: Json) => {
        seen.push(['child input', input]);
        await ctx.sleep('kid nap', '1s'); // a replay of the child too
        return withProtoKeys('child output');
      });
      const wf = defineWorkflow('proto-everywhere', async (ctx, input: Json) => {
        seen.push(['input', input]);
        seen.push(['step', await ctx.step('load', () => withProtoKeys('step'))]);
        await ctx.setState('s', withProtoKeys('state'));
        await ctx.setState('__proto__', withProtoKeys('state key'));
        seen.push(['state', await ctx.state('s')]);
        seen.push(['state key', await ctx.state('__proto__')]);
        seen.push(['child output', await ctx.child(kid, withProtoKeys('child input'))]);
        seen.push(['event', await ctx.waitForEvent('go')]);
        const failure = await ctx
          .step(
            'fails',
            () => {
              throw new CairnError('INVALID_INPUT', 'declined', { data: withProtoKeys('error data') });
            },
            { retries: 0 },
          )
          .catch((error: unknown) => ((error as Error).cause as CairnError).data);
        seen.push(['error data', failure]);
        await ctx.sleep('nap', '1m'); // one more replay, reading everything back from the store
        return withProtoKeys('output');
      });
      // About the replay: every wake replays (a kept execution would resume without one, decision 64).
      const w = await engineWorld(env, [wf, kid], { stickyExecutions: false });
      const handle = await w.engine.startRun(wf, withProtoKeys('input'));
      await w.runUntil('the run waits for its event', async () =>
        (await w.raw.steps.load(handle.id)).some((s) => s.kind === 'event' && s.status === 'waiting'),
      );
      await w.engine.sendEvent(handle.id, 'go', withProtoKeys('event'));
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'completed', `${run.status}: ${run.error?.message}`);
      assert.equal(({} as Record<string, unknown>).admin, undefined, 'Object.prototype is untouched');

      const labels: Record<string, string> = {
        input: 'input',
        step: 'step',
        state: 'state',
        'state key': 'state key',
        'child input': 'child input',
        'child output': 'child output',
        event: 'event',
        'error data': 'error data',
      };
      const findings = new Findings();
      for (const [what, label] of Object.entries(labels)) {
        const values = seen.filter(([name]) => name === what).map(([, v]) => v);
        assert.ok(values.length >= 2, `${what}: seen by the first execution and a replay (${values.length} times)`);
        for (const [i, v] of values.entries()) findings.check(v, label, `${what} as the workflow saw it (execution ${i + 1})`);
      }

      // Read back from the store directly.
      findings.check(run.input, 'input', 'stored input');
      findings.check(run.output, 'output', 'stored output');
      findings.check(await handle.result(), 'output', 'result()');
      const steps = await w.raw.steps.load(handle.id);
      findings.check(steps.find((s) => s.key === 'load')?.output, 'step', 'stored step output');
      findings.check(steps.find((s) => s.key === 'fails')?.error?.data, 'error data', 'stored error data');
      const state = await w.raw.state.get(handle.id);
      if (Object.keys(state).sort().join() !== '__proto__,s') findings.failures.push(`stored state keys: ${JSON.stringify(Object.keys(state))}`);
      findings.check(state.s, 'state', 'stored state value');
      findings.check(Object.getOwnPropertyDescriptor(state, '__proto__')?.value, 'state key', 'stored state under the key __proto__');
      findings.check((await w.raw.events.get(handle.id, 'go', 1))?.payload, 'event', 'stored event payload');
      const childRunId = steps.find((s) => s.kind === 'child')?.childRunId;
      assert.ok(childRunId !== undefined, 'the child step names its run');
      const child = await w.raw.runs.get(childRunId);
      findings.check(child?.input, 'child input', 'stored child input');
      findings.check(child?.output, 'child output', 'stored child output');
      findings.done();
    },
  ),

  conformanceCase('own properties named __proto__ are kept: continueAsNew input, a schedule input and the runs it starts', async (env) => {
    const findings = new Findings();
    const seen: Array<[string, unknown]> = [];
    const looping = defineWorkflow('proto-loop', async (ctx, input: Json) => {
      seen.push(['input', input]);
      const output = await ctx.step('load', () => withProtoKeys('step'));
      await ctx.sleep('nap', '1s'); // a replay, reading the input back
      if ((input as { label?: unknown }).label === 'first') await ctx.continueAsNew(withProtoKeys('continued'));
      return output;
    });
    const w = await engineWorld(env, [looping]);
    const first = await w.engine.startRun(looping, JSON.parse('{"__proto__":{"admin":true},"label":"first"}') as Json);
    const firstRun = await w.runToEnd(first.id);
    assert.equal(firstRun.status, 'completed', `${firstRun.status}: ${firstRun.error?.message}`);
    const next = (firstRun.output as Record<string, unknown> | undefined)?.[CONTINUED_AS];
    assert.ok(typeof next === 'string', 'the first run continued as new');
    const nextRun = await w.runToEnd(next);
    assert.equal(nextRun.status, 'completed', `${nextRun.status}: ${nextRun.error?.message}`);
    findings.check(nextRun.input, 'continued', 'stored continueAsNew input');
    for (const [i, [, v]] of seen.filter(([, v]) => (v as { label?: unknown }).label === 'continued').entries()) {
      findings.check(v, 'continued', `continueAsNew input as the workflow saw it (execution ${i + 1})`);
    }
    findings.check((await w.raw.steps.load(next)).find((s) => s.key === 'load')?.output, 'step', 'stored step output of the successor');

    await w.engine.schedules.create({ name: 'proto-schedule', workflow: 'proto-loop', cron: '* * * * *', input: withProtoKeys('schedule') });
    findings.check((await w.raw.schedules.get('proto-schedule'))?.input, 'schedule', 'stored schedule input');
    findings.check((await w.engine.schedules.get('proto-schedule'))?.input, 'schedule', 'schedule input read by the engine');
    await w.clock.set(w.clock.now() + 61_000);
    await w.engine.schedules.tick();
    await w.settle();
    const scheduled = (await w.raw.runs.list({ workflow: 'proto-loop', limit: 10 })).runs.filter((r) => r.id !== first.id && r.id !== next);
    // One run or two, as the minute ticks fell in the 61 s the clock moved.
    assert.ok(scheduled.length >= 1, 'the schedule started a run');
    for (const { id } of scheduled) findings.check((await w.runToEnd(id)).input, 'schedule', 'stored input of a scheduled run');
    findings.done();
  }),
]);
