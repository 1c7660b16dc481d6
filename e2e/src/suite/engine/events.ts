import assert from 'node:assert/strict';
import { CairnError, defineEvent, defineWorkflow, type Json } from '@cairn/core';
import type { FaultPoint } from '@cairn/core/testing';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { CrashOnceAtSite } from '../fixtures/crash-at.js';
import { uuidv7 } from '../fixtures/uuid-v7.js';
import { engineWorld } from './engine-world.js';

const waitsForApproval = (name = 'event-approval') =>
  defineWorkflow(name, async (ctx) => {
    const payload = await ctx.waitForEvent('approved');
    return { payload };
  });

/** Waits for `count` messages named `msg`, with a step after each, and returns them in order. */
const loopsOverMessages = (name: string, count: number) =>
  defineWorkflow(name, async (ctx) => {
    const got: Json[] = [];
    for (let i = 0; i < count; i += 1) {
      got.push(await ctx.waitForEvent('msg'));
      await ctx.step(`ack-${i}`, () => i);
    }
    return got;
  });

const stored = (seq: number) => ({ delivered: true, duplicate: false, seq });

/** Names both ends must refuse: generated-key endings and names too long for the wait's key. */
const RESERVED_EVENT_NAMES = ['order#42', 'order#1', 'pay:compensate', 'e'.repeat(495), 'e'.repeat(10_000)];

async function crashDuringMessages(env: CaseEnv, point: FaultPoint): Promise<void> {
  const probe = new CrashOnceAtSite();
  const dry = await engineWorld(env, [loopsOverMessages('event-crash', 3)], { faults: probe });
  const dryRun = (await dry.engine.startRun('event-crash', null)).id;
  for (const n of [1, 2, 3]) await dry.engine.sendEvent(dryRun, 'msg', { n });
  assert.deepEqual((await dry.runToEnd(dryRun)).output, [{ n: 1 }, { n: 2 }, { n: 3 }]);
  await dry.engine.stop();
  const sites = [...new Set(probe.hits.filter((h) => h.point === point && h.stepKey?.startsWith('event:')).map((h) => h.stepKey))];
  assert.ok(sites.length >= 3, `the event waits must hit ${point} (hit at: ${sites.join(', ')})`);

  for (const stepKey of sites) {
    const wf = loopsOverMessages('event-crash', 3);
    const faults = new CrashOnceAtSite({ point, stepKey });
    const w = await engineWorld(env, [wf], { faults });
    const handle = await w.engine.startRun(wf, null);
    // One message before the run starts waiting, the others while it waits or after the crash.
    await w.engine.sendEvent(handle.id, 'msg', { n: 1 });
    await w.runUntil(
      `the run waits or crashed at ${point} ${stepKey}`,
      async () => faults.crashed !== undefined || (await w.raw.runs.get(handle.id))?.status === 'waiting',
    );
    await w.engine.sendEvent(handle.id, 'msg', { n: 2 });
    await w.runUntil(`a crash at ${point} ${stepKey}`, async () => {
      if (faults.crashed !== undefined) return true;
      const run = await w.raw.runs.get(handle.id);
      if (run?.status === 'waiting' && (await w.raw.events.get(handle.id, 'msg', 3)) === undefined) await w.engine.sendEvent(handle.id, 'msg', { n: 3 });
      return false;
    });
    await w.engine.stop();
    const survivor = await w.startEngine([wf]);
    if ((await w.raw.events.get(handle.id, 'msg', 3)) === undefined) await survivor.sendEvent(handle.id, 'msg', { n: 3 });
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed', `after a crash at ${point} ${stepKey}: ${JSON.stringify(run.error)}`);
    assert.deepEqual(run.output, [{ n: 1 }, { n: 2 }, { n: 3 }], `after a crash at ${point} ${stepKey}: messages in order, each once`);
    const waits = (await w.raw.steps.load(handle.id)).filter((s) => s.kind === 'event');
    assert.deepEqual(
      waits.map((s) => [s.key, s.status, s.output]),
      [
        ['event:msg', 'succeeded', { n: 1 }],
        ['event:msg#2', 'succeeded', { n: 2 }],
        ['event:msg#3', 'succeeded', { n: 3 }],
      ],
    );
    await survivor.stop();
  }
}

/** Engine scenarios: events are messages sent to runs. */
export const eventsEngineGroup: CaseGroup = caseGroup('engine.events', 'engine: events', [
  conformanceCase('waitForEvent returns the payload of an event sent while the run waits', async (env) => {
    const wf = waitsForApproval();
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    assert.equal((await w.raw.runs.get(handle.id))?.wakeAt, undefined, 'a wait without timeout has no timer');
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'approved', { by: 'ops' }), stored(1));
    const run = await w.runToEnd(handle.id);
    assert.deepEqual(run.output, { payload: { by: 'ops' } });
    const [step] = await w.raw.steps.load(handle.id);
    assert.deepEqual([step?.kind, step?.status, step?.output], ['event', 'succeeded', { by: 'ops' }]);
  }),

  conformanceCase('an event sent before the wait is kept and consumed when the wait is reached', async (env) => {
    const wf = defineWorkflow('event-early', async (ctx) => {
      await ctx.sleep('first', '10m');
      return { payload: await ctx.waitForEvent('approved') };
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'approved', 'early'), stored(1));
    const run = await w.runToEnd(handle.id);
    assert.deepEqual(run.output, { payload: 'early' });
  }),

  conformanceCase('a wait loop receives three sends, in order, each once', async (env) => {
    const wf = loopsOverMessages('event-loop', 3);
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    for (const n of [1, 2, 3]) assert.deepEqual(await w.engine.sendEvent(handle.id, 'msg', { n }), stored(n));
    const run = await w.runToEnd(handle.id);
    assert.deepEqual(run.output, [{ n: 1 }, { n: 2 }, { n: 3 }]);
  }),

  conformanceCase('messages sent before and after the wait are received in arrival order; the loop suspends between them', async (env) => {
    const wf = loopsOverMessages('event-before-after', 3);
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'msg', 'one'), stored(1));
    await w.runUntil('the run waits for the second message', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    const waiting = await w.raw.runs.get(handle.id);
    assert.equal(waiting?.wakeAt, undefined, 'suspended with no timer: nothing to spin on');
    const steps = await w.raw.steps.load(handle.id);
    assert.deepEqual(
      steps.map((s) => [s.key, s.status]),
      [
        ['event:msg', 'succeeded'],
        ['ack-0', 'succeeded'],
        ['event:msg#2', 'waiting'],
      ],
      'one step per wait, none per pass',
    );
    await w.settle();
    assert.equal((await w.raw.steps.load(handle.id)).length, 3, 'nothing more is recorded while no message comes');
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'msg', 'two'), stored(2));
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'msg', 'three'), stored(3));
    assert.deepEqual((await w.runToEnd(handle.id)).output, ['one', 'two', 'three']);
  }),

  conformanceCase('concurrent waits of one name take the messages in call order', async (env) => {
    const wf = defineWorkflow('event-all', async (ctx) => Promise.all([ctx.waitForEvent('msg'), ctx.waitForEvent('msg'), ctx.waitForEvent('other')]));
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.engine.sendEvent(handle.id, 'msg', 'a');
    await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    await w.engine.sendEvent(handle.id, 'other', 'o');
    await w.engine.sendEvent(handle.id, 'msg', 'b');
    assert.deepEqual((await w.runToEnd(handle.id)).output, ['a', 'b', 'o']);
  }),

  conformanceCase('a wait with a timeout throws EVENT_TIMEOUT, which the workflow can catch', async (env) => {
    const wf = defineWorkflow('event-timeout', async (ctx) => {
      try {
        await ctx.waitForEvent('approved', { timeout: '5m' });
        return 'approved';
      } catch (error) {
        return CairnError.is(error, 'EVENT_TIMEOUT') ? 'timed out' : `other: ${String(error)}`;
      }
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    assert.equal((await w.raw.runs.get(handle.id))?.wakeAt, env.t0 + 5 * 60_000);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.output, 'timed out');
    assert.equal((await w.raw.steps.load(handle.id))[0]?.status, 'failed');
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'approved', 'late'), { delivered: false, duplicate: false }, 'a finished run takes no events');
    assert.equal(await w.raw.events.get(handle.id, 'approved', 1), undefined);
  }),

  conformanceCase('a wait that timed out takes no message: a message sent after the timeout goes to the next wait', async (env) => {
    const wf = defineWorkflow('event-timeout-gives-back', async (ctx) => {
      const first = await ctx.waitForEvent('msg', { timeout: '5m' }).catch((error: unknown) => (CairnError.is(error, 'EVENT_TIMEOUT') ? 'timed out' : 'other'));
      await ctx.step('remind', () => 'reminded');
      return [first, await ctx.waitForEvent('msg'), await ctx.waitForEvent('msg')];
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the first wait timed out', async () =>
      (await w.raw.steps.load(handle.id)).some((s) => s.key === 'event:msg#2' && s.status === 'waiting'),
    );
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'msg', 'late answer'), stored(1));
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'msg', 'another'), stored(2));
    assert.deepEqual((await w.runToEnd(handle.id)).output, ['timed out', 'late answer', 'another']);
  }),

  conformanceCase('a send with an idempotency key is stored once; a repeat says so', async (env) => {
    const wf = loopsOverMessages('event-idempotent', 2);
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'msg', 'first', { idempotencyKey: 'order-1' }), stored(1));
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'msg', 'first again', { idempotencyKey: 'order-1' }), { delivered: false, duplicate: true, seq: 1 });
    await w.runUntil('the run waits for the second message', async () =>
      (await w.raw.steps.load(handle.id)).some((s) => s.key === 'event:msg#2' && s.status === 'waiting'),
    );
    assert.deepEqual(await w.engine.sendEvent(handle.id, 'msg', 'second', { idempotencyKey: 'order-2' }), stored(2));
    assert.deepEqual((await w.runToEnd(handle.id)).output, ['first', 'second']);
    assert.deepEqual(
      await w.engine.sendEvent(handle.id, 'msg', 'late', { idempotencyKey: 'order-2' }),
      { delivered: false, duplicate: true, seq: 2 },
      'a repeat is a duplicate after the run ended too',
    );
  }),

  conformanceCase('of 8 concurrent sends with one idempotency key exactly one is stored and received', async (env) => {
    const wf = loopsOverMessages('event-idempotent-race', 2);
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => w.engine.sendEvent(handle.id, 'msg', { from: i }, { idempotencyKey: 'once' })));
    const winners = results.flatMap((r, i) => (r.delivered ? [i] : []));
    assert.equal(winners.length, 1, `exactly one send must be stored, ${winners.length} were`);
    assert.equal(results.filter((r) => r.duplicate).length, 7);
    assert.equal(await w.raw.events.get(handle.id, 'msg', 2), undefined, 'no second message was stored');
    await w.runUntil('the run waits for a second message', async () =>
      (await w.raw.steps.load(handle.id)).some((s) => s.key === 'event:msg#2' && s.status === 'waiting'),
    );
    await w.engine.sendEvent(handle.id, 'msg', 'next');
    assert.deepEqual((await w.runToEnd(handle.id)).output, [{ from: winners[0] }, 'next']);
  }),

  conformanceCase('send and wait accept exactly the same names: both refuse reserved endings and over-long names', async (env) => {
    const outcomes = new Map<string, string>();
    const wf = defineWorkflow('event-names', async (ctx) => {
      for (const name of RESERVED_EVENT_NAMES) {
        try {
          await ctx.waitForEvent(name, { timeout: 1 });
          outcomes.set(name, 'accepted');
        } catch (error) {
          outcomes.set(name, CairnError.is(error) ? error.code : String(error));
        }
      }
      return [await ctx.waitForEvent('order#x'), await ctx.waitForEvent('x'.repeat(494)), await ctx.waitForEvent('pay:compensated')];
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    for (const name of RESERVED_EVENT_NAMES) {
      const error = await rejectsWithCode(w.engine.sendEvent(handle.id, name, 'x'), 'INVALID_INPUT', `sendEvent(${name.slice(0, 20)})`);
      assert.match(error.message, /event name/);
      assert.equal(await w.raw.events.get(handle.id, name, 1), undefined, 'nothing stored');
    }
    for (const name of ['order#x', 'x'.repeat(494), 'pay:compensated']) assert.deepEqual(await w.engine.sendEvent(handle.id, name, name.length), stored(1));
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed', JSON.stringify(run.error));
    assert.deepEqual(run.output, [7, 494, 15]);
    assert.deepEqual(
      [...outcomes.values()],
      RESERVED_EVENT_NAMES.map(() => 'INVALID_INPUT'),
      'every reserved name is refused by the wait too',
    );
  }),

  conformanceCase('a typed event: one definition for sender and waiter; its schema refuses a bad payload on send', async (env) => {
    const approval = defineEvent<{ by: string }>('approval', {
      schema: {
        parse(value: unknown) {
          if (typeof value !== 'object' || value === null || typeof (value as { by?: unknown }).by !== 'string')
            throw new Error('approval needs a string "by"');
          return { by: (value as { by: string }).by };
        },
      },
    });
    const wf = defineWorkflow('event-typed', async (ctx) => {
      const got = await ctx.waitForEvent(approval);
      const by: string = got.by;
      // @ts-expect-error the wait resolves with the definition's type, which has no `other`
      void got.other;
      return by;
    });
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the run waits', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    // @ts-expect-error the payload of `approval` is typed { by: string }: this does not compile
    await rejectsWithCode(w.engine.sendEvent(handle.id, approval, { nobody: 1 }), 'INVALID_INPUT', 'a payload the schema refuses');
    assert.equal(await w.raw.events.get(handle.id, 'approval', 1), undefined, 'nothing stored');
    // The schema's result is what is stored: extra fields it drops never reach the waiter.
    assert.deepEqual(await w.engine.sendEvent(handle.id, approval, { by: 'ops', extra: true } as { by: string }), stored(1));
    assert.equal((await w.runToEnd(handle.id)).output, 'ops');
    assert.deepEqual((await w.raw.events.get(handle.id, 'approval', 1))?.payload, { by: 'ops' });
  }),

  conformanceCase('defineEvent refuses a name that a wait would refuse', async () => {
    for (const name of RESERVED_EVENT_NAMES)
      assert.throws(
        () => defineEvent(name),
        (error: unknown) => CairnError.is(error, 'INVALID_INPUT'),
      );
  }),

  conformanceCase('message order survives a crash before the wait records its message', (env) => crashDuringMessages(env, 'before-checkpoint')),
  conformanceCase('message order survives a crash after the wait recorded its message', (env) => crashDuringMessages(env, 'after-checkpoint')),

  conformanceCase('a null payload arrives as null', async (env) => {
    const wf = waitsForApproval('event-null');
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.settle();
    await w.engine.sendEvent(handle.id, 'approved', null);
    assert.deepStrictEqual((await w.runToEnd(handle.id)).output, { payload: null });
  }),

  conformanceCase('sending to a missing run is RUN_NOT_FOUND', async (env) => {
    const w = await engineWorld(env, [waitsForApproval()]);
    await rejectsWithCode(w.engine.sendEvent(uuidv7(), 'approved', 1), 'RUN_NOT_FOUND');
  }),
]);
