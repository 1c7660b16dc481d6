// Standard Schema validation (issue 28 part 3): a workflow's input is validated in startRun before
// anything is written, an event's payload in sendEvent before anything is stored, a workflow's
// output when its handler returns (a refusal fails the run). With the real zod, valibot and ArkType,
// a hand-written Standard Schema object and an async validator.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, defineEvent, defineWorkflow } from '@cairn/core';
import type { StandardSchemaV1 } from '@cairn/core/backend';
import { type } from 'arktype';
import * as v from 'valibot';
import { z } from 'zod';
import { type Fixture, createFixture, rejectsWithCode, turn, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

/** The store calls `run` makes, split into reads and writes. */
async function storeCalls(fx: Fixture, run: () => Promise<unknown>): Promise<{ writes: string[]; reads: string[] }> {
  fx.counter.reset();
  try {
    await run();
  } catch {
    // The caller looks at the error itself.
  }
  return { writes: fx.counter.writes().map((c) => c.method), reads: fx.counter.calls.filter((c) => !c.write).map((c) => c.method) };
}

/** A hand-written Standard Schema: a positive integer amount in cents, given as a number or a numeric string. */
const cents: StandardSchemaV1<number | string, { cents: number }> = {
  '~standard': {
    version: 1,
    vendor: 'cairn-test',
    validate(value) {
      const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) {
        return { issues: [{ message: 'a positive whole number of cents', path: [] }] };
      }
      return { value: { cents: n } };
    },
  },
};

describe('Standard Schema validation', () => {
  it('zod input: startRun stores and hands over the schema value; a refused input is INVALID_INPUT with the issues, and nothing is written', async () => {
    const seen: unknown[] = [];
    const signup = defineWorkflow(
      'signup',
      async (ctx, input) => {
        seen.push(input);
        await ctx.sleep('settle', 1000); // a replay reads the stored input: the schema is not applied again
        return { account: `acct:${input.email}`, plan: input.plan };
      },
      { input: z.object({ email: z.string().trim().toLowerCase().pipe(z.email()), plan: z.enum(['free', 'pro']).default('free') }) },
    );
    // About the replay: every wake replays (a kept execution would resume without one, decision 64).
    const fx = await createFixture({ workflows: [signup], stickyExecutions: false });
    try {
      const bad = await storeCalls(fx, () => fx.engine.startRun(signup, { email: 'not an email', plan: 'gold' as 'pro' }));
      assert.deepEqual(bad.writes, [], 'nothing written');
      const err = await rejectsWithCode(fx.engine.startRun(signup, { email: 'not an email', plan: 'gold' as 'pro' }), 'INVALID_INPUT');
      assert.match(err.message, /^input of workflow "signup" does not match its schema: .+ at input\.email \(and 1 more issue\)$/);
      const data = err.data as { argument: string; workflow: string; issues: { message: string; path: unknown[] }[]; issueCount: number };
      assert.equal(data.argument, 'input');
      assert.equal(data.workflow, 'signup');
      assert.equal(data.issueCount, 2);
      assert.deepEqual(
        data.issues.map((issue) => issue.path),
        [['email'], ['plan']],
      );
      for (const issue of data.issues) assert.equal(typeof issue.message, 'string');
      assert.deepEqual(JSON.parse(JSON.stringify(err.data)), err.data, 'the data is JSON');
      assert.equal((await fx.inner.runs.list({})).runs.length, 0);

      const h = await fx.engine.startRun(signup, { email: '  Ada@Example.com ' });
      await waitForIdle(fx.inner, h.id);
      assert.deepEqual((await fx.inner.runs.get(h.id))?.input, { email: 'ada@example.com', plan: 'free' }, 'the schema value is stored');
      await fx.clock.advance(1000);
      assert.deepEqual(await h.result(), { account: 'acct:ada@example.com', plan: 'free' });
      assert.deepEqual(seen, [
        { email: 'ada@example.com', plan: 'free' },
        { email: 'ada@example.com', plan: 'free' },
      ]);
    } finally {
      await fx.engine.stop();
    }
  });

  it('valibot event payload: sendEvent stores the schema value; a refused payload is INVALID_INPUT with the issues and nothing is stored', async () => {
    const approval = defineEvent('approval', {
      schema: v.object({ approvedBy: v.pipe(v.string(), v.trim(), v.minLength(1)), level: v.optional(v.number(), 1) }),
    });
    const wf = defineWorkflow('approve', async (ctx) => ctx.waitForEvent(approval));
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      const bad = await storeCalls(fx, () => fx.engine.sendEvent(h.id, approval, { approvedBy: '   ' }));
      assert.deepEqual(bad.writes, [], 'nothing stored');
      assert.deepEqual(bad.reads, [], 'refused before the store is touched');
      const err = await rejectsWithCode(fx.engine.sendEvent(h.id, approval, { approvedBy: '   ' }), 'INVALID_INPUT');
      assert.match(err.message, /^payload of event "approval" does not match its schema: .+ at payload\.approvedBy$/);
      assert.deepEqual(
        (err.data as { issues: { path: unknown[] }[] }).issues.map((i) => i.path),
        [['approvedBy']],
      );
      assert.deepEqual((err.data as { event: string; argument: string }).event, 'approval');
      assert.equal(await fx.inner.events.get(h.id, 'approval', 1), undefined);

      await fx.engine.sendEvent(h.id, approval, { approvedBy: ' Ada ' });
      assert.deepEqual(await h.result(), { approvedBy: 'Ada', level: 1 });
      assert.deepEqual((await fx.inner.events.get(h.id, 'approval', 1))?.payload, { approvedBy: 'Ada', level: 1 });
    } finally {
      await fx.engine.stop();
    }
  });

  it('ArkType output: a refused output fails the run with INVALID_OUTPUT and the issues, after its compensations; a valid one is the run output', async () => {
    const undone: string[] = [];
    const invoice = defineWorkflow(
      'invoice',
      async (ctx, input: { amount: number }) => {
        await ctx.step('reserve', () => 'r-1', { compensate: () => void undone.push('reserve') });
        return { total: input.amount, currency: 'EUR' };
      },
      { output: type({ total: 'number.integer >= 0', currency: "'EUR' | 'USD'" }) },
    );
    const fx = await createFixture({ workflows: [invoice] });
    try {
      const ok = await fx.engine.startRun(invoice, { amount: 12 });
      assert.deepEqual(await ok.result(), { total: 12, currency: 'EUR' });
      assert.deepEqual(undone, []);

      const h = await fx.engine.startRun(invoice, { amount: 1.5 });
      const run = await waitForStatus(fx.inner, h.id, ['failed', 'completed']);
      assert.equal(run.status, 'failed');
      const error = run.error;
      assert.ok(error);
      assert.equal(error.code, 'INVALID_OUTPUT');
      assert.match(error.message, /^output of workflow "invoice" does not match its schema: .+ at output\.total$/);
      const data = error.data as { workflow: string; issues: { path: unknown[] }[] };
      assert.deepEqual(
        data.issues.map((i) => i.path),
        [['total']],
      );
      assert.equal(data.workflow, 'invoice');
      assert.deepEqual(undone, ['reserve'], 'a refused output fails the run as any failure: its compensations ran');
      const err = await rejectsWithCode(h.result(), 'RUN_FAILED');
      assert.ok(CairnError.is(err.cause, 'INVALID_OUTPUT'));
    } finally {
      await fx.engine.stop();
    }
  });

  it('a hand-written Standard Schema on the input: transformed value stored, refusal with its message at the root, nothing written', async () => {
    const charge = defineWorkflow('charge', async (_ctx, input) => input.cents * 2, { input: cents });
    const fx = await createFixture({ workflows: [charge] });
    try {
      const bad = await storeCalls(fx, () => fx.engine.startRun(charge, '-3'));
      assert.deepEqual(bad.writes, []);
      const err = await rejectsWithCode(fx.engine.startRun(charge, '-3'), 'INVALID_INPUT');
      assert.equal(err.message, 'input of workflow "charge" does not match its schema: a positive whole number of cents at input');
      assert.deepEqual((err.data as { issues: unknown }).issues, [{ message: 'a positive whole number of cents', path: [] }]);
      // With an idempotency key too: refused before the key is looked at.
      const keyed = await storeCalls(fx, () => fx.engine.startRun(charge, 0, { idempotencyKey: 'k' }));
      assert.deepEqual(keyed.writes, []);

      const h = await fx.engine.startRun(charge, '250');
      assert.equal(await h.result(), 500);
      assert.deepEqual((await fx.inner.runs.get(h.id))?.input, { cents: 250 });
    } finally {
      await fx.engine.stop();
    }
  });

  it('async validators: an input schema that resolves a macrotask later, an event schema and an output schema, awaited; a throwing one is INVALID_INPUT with the cause', async () => {
    let calls = 0;
    const later = <T>(value: T): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), 1));
    const asyncSchema = <T>(check: (value: unknown) => T | undefined, message: string): StandardSchemaV1<unknown, T> => ({
      '~standard': {
        version: 1,
        vendor: 'cairn-test-async',
        async validate(value) {
          calls++;
          const checked = check(value);
          return later(checked === undefined ? { issues: [{ message, path: [{ key: 'deep' }, 0, Symbol('s')] }] } : { value: checked });
        },
      },
    });
    const known = asyncSchema(
      (value) => (typeof value === 'object' && value !== null && 'sku' in value ? { sku: String(value.sku) } : undefined),
      'unknown sku',
    );
    const confirmed = defineEvent('confirmed', { schema: asyncSchema((value) => (value === true ? { ok: true } : undefined), 'not confirmed') });
    const reserve = defineWorkflow(
      'reserve',
      async (ctx, input) => {
        const answer = await ctx.waitForEvent(confirmed);
        return { sku: input.sku, ok: answer.ok };
      },
      { input: known, output: asyncSchema((value) => ((value as { ok?: boolean }).ok === true ? value : undefined), 'not ok') },
    );
    const throwing: StandardSchemaV1<unknown, unknown> = {
      '~standard': {
        version: 1,
        vendor: 'cairn-test-throwing',
        validate: async () => {
          throw new Error('validator crashed');
        },
      },
    };
    const broken = defineWorkflow('broken', async () => null, { input: throwing });
    const fx = await createFixture({ workflows: [reserve, broken] });
    try {
      const bad = await storeCalls(fx, () => fx.engine.startRun(reserve, { nope: 1 }));
      assert.deepEqual(bad.writes, []);
      const err = await rejectsWithCode(fx.engine.startRun(reserve, { nope: 1 }), 'INVALID_INPUT');
      assert.equal(err.message, 'input of workflow "reserve" does not match its schema: unknown sku at input.deep[0].s');
      assert.deepEqual((err.data as { issues: unknown }).issues, [{ message: 'unknown sku', path: ['deep', 0, 's'] }]);

      const crashed = await rejectsWithCode(fx.engine.startRun(broken, null), 'INVALID_INPUT');
      assert.match(crashed.message, /^input of workflow "broken": its schema failed to validate it: validator crashed$/);
      assert.equal((crashed.cause as Error).message, 'validator crashed');

      const h = await fx.engine.startRun(reserve, { sku: 7 });
      await waitForIdle(fx.inner, h.id);
      assert.deepEqual((await fx.inner.runs.get(h.id))?.input, { sku: '7' });
      await rejectsWithCode(fx.engine.sendEvent(h.id, confirmed, false), 'INVALID_INPUT');
      await fx.engine.sendEvent(h.id, confirmed, true);
      // The output validator resolves on a timer, outside the workflow's turns: the run still completes.
      for (let i = 0; i < 50 && (await fx.inner.runs.get(h.id))?.status !== 'completed'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 2));
        await turn();
      }
      assert.deepEqual(await h.result(), { sku: '7', ok: true });
      assert.ok(calls >= 5);
    } finally {
      await fx.engine.stop();
    }
  });

  it('forkRun with a new input applies the input schema of the version the fork runs on', async () => {
    const wf = defineWorkflow('forked', async (ctx, input) => ctx.step('echo', () => input.cents), { input: cents });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, 5);
      assert.equal(await h.result(), 5);
      const bad = await storeCalls(fx, () => fx.engine.forkRun(h.id, { fromStep: 'echo', input: 'five' }));
      assert.deepEqual(bad.writes, []);
      await rejectsWithCode(fx.engine.forkRun(h.id, { fromStep: 'echo', input: 'five' }), 'INVALID_INPUT');
      const fork = await fx.engine.forkRun(h.id, { fromStep: 'echo', input: '9' });
      assert.equal(await fork.result(), 9);
      assert.deepEqual((await fx.inner.runs.get(fork.id))?.input, { cents: 9 });
    } finally {
      await fx.engine.stop();
    }
  });

  it('defineWorkflow and defineEvent refuse a schema that is not a Standard Schema; an event schema with only parse still works', async () => {
    assert.throws(
      () => defineWorkflow('x', async () => null, { input: { parse: (x: unknown) => x } as never }),
      (e: unknown) => CairnError.is(e, 'INVALID_INPUT') && /input: must be a Standard Schema/.test((e as Error).message),
    );
    assert.throws(
      () => defineWorkflow('x', async () => null, { output: { '~standard': { version: 2, validate: () => ({ value: 1 }) } } as never }),
      (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
    );
    assert.throws(
      () => defineEvent('e', { schema: {} as never }),
      (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
    );
    const legacy = defineEvent('legacy', {
      schema: {
        parse(value: unknown) {
          if (typeof value !== 'number') throw new Error('a number');
          return value + 1;
        },
      },
    });
    const wf = defineWorkflow('legacy parse', async (ctx) => ctx.waitForEvent(legacy));
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      const err = await rejectsWithCode(fx.engine.sendEvent(h.id, legacy, 'one' as unknown as number), 'INVALID_INPUT');
      assert.equal(err.message, 'payload of event "legacy" does not match its schema: a number');
      await fx.engine.sendEvent(h.id, legacy, 1);
      assert.equal(await h.result(), 2);
    } finally {
      await fx.engine.stop();
    }
  });
});
