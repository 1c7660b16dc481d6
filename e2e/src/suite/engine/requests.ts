import assert from 'node:assert/strict';
import { type Json, defineRequest, defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { CrashOnceAtSite } from '../fixtures/crash-at.js';
import { type EngineWorld, engineWorld, storesFor } from './engine-world.js';

/**
 * Waits for a call while moving the world's clock: a caller waiting for a reply looks at the store
 * on its poll timer (the only wake-up on a store without signals), which only the clock fires.
 */
async function answered<T>(w: EngineWorld, call: Promise<T>): Promise<T> {
  let done = false;
  const result = call.finally(() => {
    done = true;
  });
  result.catch(() => {});
  for (let i = 0; i < 2000 && !done; i += 1) {
    await w.settle();
    if (done) break;
    await w.clock.advanceToNextTimer();
  }
  // A caller still waiting after that many timers would hang the case: say so instead.
  if (!done) assert.fail(`the request was not answered within 2,000 timers. Engine log:\n${w.log.join('\n')}`);
  return result;
}

const changeAddress = defineRequest<{ street: string }, { ok: boolean; street: string; n: number }>('change-address');

/** The store writes of request receipts and replies that created an entry, for one run. */
function requestEntriesWritten(w: EngineWorld, runId: string): { index: number; data: Json }[] {
  return w.store.calls
    .filter((c) => c.method === 'streams.append' && c.runId === runId && c.outcome?.ok === true)
    .filter((c) => (c.outcome as { value: { created: boolean } }).value.created)
    .map((c) => c.args[2] as { stream: string; index: number; data: Json })
    .filter((e) => e.stream.startsWith('$request:'))
    .map((e) => ({ index: e.index, data: e.data }));
}

/**
 * Takes `input.requests` requests one after another, each checked by a step and answered, with a
 * sleep after each (the next execution replays every receive and reply before it). A street named
 * "refuse" is rejected. With `napFirst`, it sleeps an hour before it takes any.
 */
function ordersWorkflow(ran: { checks: number }) {
  return defineWorkflow('request-orders', async (ctx, input: { requests: number; napFirst?: boolean }) => {
    if (input.napFirst === true) await ctx.sleep('nap-first', '1h');
    const seen: string[] = [];
    for (let i = 0; i < input.requests; i += 1) {
      const request = await ctx.receiveRequest(changeAddress);
      const ok = await ctx.step(`check-${i}`, () => {
        ran.checks += 1;
        return request.payload.street.length > 0;
      });
      if (request.payload.street === 'refuse') await request.reject(new Error('not this street'));
      else await request.reply({ ok, street: request.payload.street, n: i });
      seen.push(request.payload.street);
      await ctx.sleep(`nap-${i}`, '1m');
    }
    return seen;
  });
}

/**
 * The store writes that could have changed something: a refused write (`RUN_NOT_FOUND`, ...) and a
 * send that stored nothing (a duplicate, an ended run) are left out.
 */
function changingWrites(w: EngineWorld): number {
  return w.store
    .writes()
    .filter((c) => c.outcome?.ok === true)
    .filter((c) => !(c.method === 'events.deliver' && (c.outcome as { value: { delivered: boolean } }).value.delivered === false)).length;
}

async function waiting(w: EngineWorld, runId: string): Promise<void> {
  await w.runUntil('the run waits', async () => (await w.raw.runs.get(runId))?.status === 'waiting');
}

async function crashInRequests(env: CaseEnv): Promise<void> {
  const probe = new CrashOnceAtSite();
  const dry = await engineWorld(env, [ordersWorkflow({ checks: 0 })], { faults: probe });
  const dryRun = await dry.engine.startRun('request-orders', { requests: 1 });
  await waiting(dry, dryRun.id);
  await answered(dry, dry.engine.request(dryRun.id, changeAddress, { street: 'A' }, { timeout: '1h' }));
  await dry.runToEnd(dryRun.id);
  await dry.engine.stop();
  const sites = [
    ...new Map(
      probe.hits.filter((h) => h.stepKey?.startsWith('request:') && h.point.endsWith('-checkpoint')).map((h) => [`${h.point} ${h.stepKey}`, h]),
    ).values(),
  ];
  assert.equal(sites.length, 4, `before and after the receipt and the reply: ${sites.map((s) => `${s.point} ${s.stepKey}`).join(', ')}`);
  for (const target of sites) {
    const ran = { checks: 0 };
    const wf = ordersWorkflow(ran);
    const faults = new CrashOnceAtSite({ point: target.point, stepKey: target.stepKey });
    const w = await engineWorld(env, [wf], { faults });
    const handle = await w.engine.startRun(wf, { requests: 1 });
    await waiting(w, handle.id);
    // The caller is another process: it outlives the worker's crash.
    const caller = await w.startEngine([], { noWorkers: true });
    const reply = caller.request(handle.id, changeAddress, { street: 'A' }, { timeout: '1h' });
    await w.runUntil(`a crash at ${target.point} ${target.stepKey}`, async () => faults.crashed !== undefined);
    await w.engine.stop();
    const survivor = await w.startEngine([wf]);
    const where = `after a crash at ${target.point} ${target.stepKey}`;
    assert.deepEqual(await answered(w, reply), { ok: true, street: 'A', n: 0 }, where);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed', where);
    assert.deepEqual(run.output, ['A'], where);
    assert.ok(ran.checks <= 1 || target.point === 'before-checkpoint', `${where}: the check ran ${ran.checks} times`);
    const streams = w.raw.streams;
    assert.ok(streams);
    const entries = (await w.raw.events.get(handle.id, '$request:change-address', 1))?.payload as { id: string };
    assert.deepEqual(
      (await streams.read(handle.id, `$request:${entries.id}`, 0, 10)).map((e) => [e.index, e.data]),
      [
        [0, 'received'],
        [1, { ok: true, value: { ok: true, street: 'A', n: 0 } }],
      ],
      `${where}: one receipt, one reply`,
    );
    await survivor.stop();
    await caller.stop();
  }
}

/** Engine scenarios: requests (`engine.request`, `ctx.receiveRequest`). */
export const requestsGroup: CaseGroup = caseGroup('engine.requests', 'engine: requests', [
  conformanceCase(
    'a request to a waiting run gets its reply; replays receive the same requests and write nothing again',
    async (env) => {
      const ran = { checks: 0 };
      const wf = ordersWorkflow(ran);
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, { requests: 3 });
      await waiting(w, handle.id);
      assert.deepEqual(await answered(w, w.engine.request(handle.id, changeAddress, { street: 'A' }, { timeout: '1h' })), { ok: true, street: 'A', n: 0 });
      assert.deepEqual(await answered(w, w.engine.request(handle.id, 'change-address', { street: 'B' }, { timeout: '1h' })), {
        ok: true,
        street: 'B',
        n: 1,
      });
      const refused = await rejectsWithCode(
        answered(w, w.engine.request(handle.id, changeAddress, { street: 'refuse' }, { timeout: '1h' })),
        'REQUEST_REJECTED',
      );
      assert.match((refused.cause as Error).message, /not this street/);
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'completed', `the run ended ${run.status}: ${JSON.stringify(run.error)}`);
      assert.deepEqual(run.output, ['A', 'B', 'refuse']);
      assert.equal(ran.checks, 3, 'each request was checked once');
      const written = requestEntriesWritten(w, handle.id);
      assert.deepEqual(
        written.map((e) => e.index),
        [0, 1, 0, 1, 0, 1],
        'one receipt and one reply per request, each written once across the replays',
      );
      const steps = await w.raw.steps.load(handle.id);
      assert.deepEqual(
        steps.filter((s) => s.kind === 'event').map((s) => [s.key, (s.output as { payload: Json }).payload]),
        [
          ['event:$request:change-address', { street: 'A' }],
          ['event:$request:change-address#2', { street: 'B' }],
          ['event:$request:change-address#3', { street: 'refuse' }],
        ],
        'the history records each request',
      );
      assert.deepEqual(await w.engine.listStreams(handle.id), [], 'request streams are not the run streams');
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'an idempotency key gets the first reply again, also after the run ended; another key is another request',
    async (env) => {
      const ran = { checks: 0 };
      const wf = ordersWorkflow(ran);
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, { requests: 2 });
      await waiting(w, handle.id);
      const first = await answered(w, w.engine.request(handle.id, changeAddress, { street: 'A' }, { timeout: '1h', idempotencyKey: 'k1' }));
      const again = await answered(w, w.engine.request(handle.id, changeAddress, { street: 'other' }, { timeout: '1h', idempotencyKey: 'k1' }));
      assert.deepEqual(again, first, 'a repeat gets the first reply');
      const second = await answered(w, w.engine.request(handle.id, changeAddress, { street: 'B' }, { timeout: '1h', idempotencyKey: 'k2' }));
      assert.deepEqual(second, { ok: true, street: 'B', n: 1 });
      const run = await w.runToEnd(handle.id);
      assert.deepEqual(run.output, ['A', 'B']);
      assert.equal(ran.checks, 2);
      const before = changingWrites(w);
      assert.deepEqual(
        await answered(w, w.engine.request(handle.id, changeAddress, { street: 'late' }, { idempotencyKey: 'k1' })),
        first,
        'a repeat after the end still gets it',
      );
      assert.equal(changingWrites(w), before, 'a repeat writes nothing');
      // Concurrent requests with one key: one message, one reply for all.
      const w2 = await engineWorld(env, [wf]);
      const h2 = await w2.engine.startRun(wf, { requests: 1 });
      await waiting(w2, h2.id);
      const replies = await answered(
        w2,
        Promise.all([1, 2, 3].map((i) => w2.engine.request(h2.id, changeAddress, { street: `S${i}` }, { timeout: '1h', idempotencyKey: 'same' }))),
      );
      assert.equal(new Set(replies.map((r) => JSON.stringify(r))).size, 1, `one reply for all: ${JSON.stringify(replies)}`);
      assert.equal((await w2.runToEnd(h2.id)).status, 'completed');
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'a request nobody takes before its timeout is withdrawn: REQUEST_TIMEOUT, and the workflow never sees it',
    async (env) => {
      const ran = { checks: 0 };
      const wf = ordersWorkflow(ran);
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, { requests: 1, napFirst: true });
      await waiting(w, handle.id);
      const error = await rejectsWithCode(
        answered(w, w.engine.request(handle.id, changeAddress, { street: 'too-early' }, { timeout: '5s', idempotencyKey: 'early' })),
        'REQUEST_TIMEOUT',
      );
      assert.deepEqual(error.data, { runId: handle.id, request: 'change-address', received: false });
      // The same key stays timed out, at once.
      await rejectsWithCode(answered(w, w.engine.request(handle.id, changeAddress, { street: 'x' }, { idempotencyKey: 'early' })), 'REQUEST_TIMEOUT');
      // After the nap the workflow passes over the withdrawn request and waits for the next one.
      await w.runUntil('the run waits for a second request', async () =>
        (await w.raw.steps.load(handle.id)).some((s) => s.key === 'event:$request:change-address#2'),
      );
      const late = w.engine.request(handle.id, changeAddress, { street: 'on-time' }, { timeout: '2h' });
      assert.deepEqual(await answered(w, late), { ok: true, street: 'on-time', n: 0 });
      const run = await w.runToEnd(handle.id);
      assert.deepEqual(run.output, ['on-time']);
      assert.equal(ran.checks, 1);
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'a request taken but not answered before its timeout: REQUEST_TIMEOUT with received, and the reply comes to its key later',
    async (env) => {
      const slow = defineWorkflow('request-slow', async (ctx) => {
        const request = await ctx.receiveRequest<{ n: number }, number>('double');
        await ctx.sleep('think', '1h');
        await request.reply(request.payload.n * 2);
        return 'done';
      });
      const w = await engineWorld(env, [slow]);
      const handle = await w.engine.startRun(slow, null);
      await waiting(w, handle.id);
      const error = await rejectsWithCode(
        answered(w, w.engine.request(handle.id, 'double', { n: 21 }, { timeout: '1m', idempotencyKey: 'd' })),
        'REQUEST_TIMEOUT',
      );
      assert.equal((error.data as { received: boolean }).received, true);
      assert.equal((await w.runToEnd(handle.id)).status, 'completed');
      assert.equal(await answered(w, w.engine.request(handle.id, 'double', { n: 0 }, { idempotencyKey: 'd' })), 42, 'the reply, to the same key');
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'a run that ends without replying fails its waiting requests with REQUEST_RUN_ENDED; one that has ended refuses at once',
    async (env) => {
      const quitter = defineWorkflow('request-quitter', async (ctx) => {
        await ctx.receiveRequest('first');
        await ctx.sleep('nap', '1m');
        return 'bye';
      });
      const w = await engineWorld(env, [quitter]);
      const handle = await w.engine.startRun(quitter, null);
      await waiting(w, handle.id);
      const taken = w.engine.request(handle.id, 'first', null, { timeout: '1h' });
      const never = w.engine.request(handle.id, 'second', null, { timeout: '1h' });
      const [a, b] = await answered(w, Promise.all([rejectsWithCode(taken, 'REQUEST_RUN_ENDED'), rejectsWithCode(never, 'REQUEST_RUN_ENDED')]));
      assert.equal((a.data as { received: boolean }).received, true);
      assert.equal((b.data as { received: boolean }).received, false);
      const before = changingWrites(w);
      const ended = await rejectsWithCode(w.engine.request(handle.id, 'first', { late: true }), 'REQUEST_RUN_ENDED');
      assert.equal((ended.data as { received: boolean }).received, false);
      assert.equal(changingWrites(w), before, 'nothing written for a request to an ended run');
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'bad input: typed errors, nothing written',
    async (env) => {
      const seen: string[] = [];
      const schema = defineRequest<{ n: number }, number, { n: unknown }>('checked', {
        schema: {
          parse: (value) => {
            const n = (value as { n?: unknown } | null)?.n;
            if (typeof n !== 'number') throw new Error('n must be a number');
            return { n: n + 1 };
          },
        },
      });
      const wf = defineWorkflow('request-refusals', async (ctx) => {
        const request = await ctx.receiveRequest(schema);
        for (const attempt of [
          () => request.reply((() => 1) as unknown as number),
          () => request.reply('x'.repeat(70_000) as unknown as number),
          () => ctx.emit('$request:fake', 1),
          () => ctx.emit('$query:fake', 1),
          () => ctx.receiveRequest(''),
        ]) {
          try {
            await attempt();
            seen.push('written');
          } catch (error) {
            seen.push((error as { code?: string }).code ?? 'untyped');
          }
        }
        await request.reply(request.payload.n);
        try {
          await request.reply(0);
        } catch (error) {
          seen.push((error as { code?: string }).code ?? 'untyped');
        }
        return 'ok';
      });
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, null);
      await waiting(w, handle.id);
      const before = changingWrites(w);
      // Each call made only when it is awaited: a rejection nobody waits for yet would be unhandled.
      const refusals: [() => Promise<unknown>, string][] = [
        [() => w.engine.request('no-such-run', 'checked', { n: 1 }), 'RUN_NOT_FOUND'],
        [() => w.engine.request(handle.id, schema, { n: 'one' } as never), 'INVALID_INPUT'],
        [() => w.engine.request(handle.id, 'checked', (() => 1) as never), 'NOT_SERIALIZABLE'],
        [() => w.engine.request(handle.id, 'checked', 'x'.repeat(1024 * 1024 + 1)), 'PAYLOAD_TOO_LARGE'],
        [() => w.engine.request(handle.id, '', null), 'INVALID_INPUT'],
        [() => w.engine.request(handle.id, 'x#2', null), 'INVALID_INPUT'],
        [() => w.engine.request(handle.id, 'checked', null, { nope: 1 } as never), 'INVALID_INPUT'],
        [() => w.engine.request(handle.id, 'checked', null, { timeout: -1 }), 'INVALID_INPUT'],
        [() => w.engine.request(42 as unknown as string, 'checked', null), 'INVALID_INPUT'],
        [() => w.engine.sendEvent(handle.id, '$request:checked', { id: 'forged', payload: null }), 'INVALID_INPUT'],
      ];
      for (const [call, code] of refusals) await rejectsWithCode(call(), code as never, code);
      assert.equal(changingWrites(w), before, 'refused requests write nothing');
      assert.equal(await answered(w, w.engine.request(handle.id, schema, { n: 1 }, { timeout: '1h' })), 2, 'the schema transformed the payload');
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.deepEqual(seen, ['NOT_SERIALIZABLE', 'PAYLOAD_TOO_LARGE', 'INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT']);
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'several engines on one store: callers in other processes get their replies, and each request is taken once',
    async (env) => {
      const [, peerA, peerB] = await storesFor(env, 3);
      const ran = { checks: 0 };
      const wf = ordersWorkflow(ran);
      const w = await engineWorld(env, [wf]);
      await w.startEngine([wf], { store: peerA });
      const caller = await w.startEngine([], { store: peerB, noWorkers: true });
      const handle = await w.engine.startRun(wf, { requests: 4 });
      await waiting(w, handle.id);
      const replies = await answered(
        w,
        Promise.all(['A', 'B', 'C', 'D'].map((street) => caller.request(handle.id, changeAddress, { street }, { timeout: '1h' }))),
      );
      assert.deepEqual(replies.map((r) => r.street).sort(), ['A', 'B', 'C', 'D']);
      assert.deepEqual(replies.map((r) => r.n).sort(), [0, 1, 2, 3], 'each request taken by its own receive');
      const run = await w.runToEnd(handle.id);
      assert.deepEqual([...(run.output as string[])].sort(), ['A', 'B', 'C', 'D']);
      assert.equal(ran.checks, 4);
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'a query reads the latest exposed value from the store without waking the run; replays never bring an earlier one back',
    async (env) => {
      const status = defineWorkflow('request-status', async (ctx) => {
        await ctx.expose('status', { phase: 'start' });
        await ctx.sleep('a', '1m');
        await ctx.expose('status', { phase: 'middle' });
        const request = await ctx.receiveRequest('advance');
        await ctx.expose('status', { phase: 'end' });
        await request.reply('ok');
        await ctx.sleep('b', '1m');
        return 'done';
      });
      const w = await engineWorld(env, [status]);
      const handle = await w.engine.startRun(status, null);
      await w.runUntil('the run waits for a request', async () =>
        (await w.raw.steps.load(handle.id)).some((s) => s.key === 'event:$request:advance' && s.status === 'waiting'),
      );
      await w.settle();
      const claims = w.store.count('runs.claim');
      const writes = changingWrites(w);
      const middle = await w.engine.query(handle.id, 'status');
      assert.deepEqual(middle && [middle.value, middle.index], [{ phase: 'middle' }, 1]);
      assert.equal(await w.engine.query(handle.id, 'never-exposed'), undefined);
      await rejectsWithCode(w.engine.query('no-such-run', 'status'), 'RUN_NOT_FOUND');
      await rejectsWithCode(w.engine.query(handle.id, ''), 'INVALID_INPUT');
      await rejectsWithCode(w.engine.query(42 as unknown as string, 'status'), 'INVALID_INPUT');
      await w.settle();
      assert.equal(w.store.count('runs.claim'), claims, 'a query wakes nothing');
      assert.equal(changingWrites(w), writes, 'a query writes nothing');
      assert.equal(await answered(w, w.engine.request(handle.id, 'advance', null, { timeout: '1h' })), 'ok');
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'completed');
      const end = await w.engine.query(handle.id, 'status');
      assert.deepEqual(end && [end.value, end.index], [{ phase: 'end' }, 2], 'an ended run still answers');
      const exposes = w.store.calls.filter(
        (c) =>
          c.method === 'streams.append' &&
          c.runId === handle.id &&
          (c.args[2] as { stream: string }).stream === '$query:status' &&
          c.outcome?.ok === true &&
          (c.outcome as { value: { created: boolean } }).value.created,
      );
      assert.equal(exposes.length, 3, 'each value written once across the replays');
      assert.deepEqual(await w.engine.listStreams(handle.id), []);
    },
    { requires: ['streams'] },
  ),

  conformanceCase('a crash before and after each receipt and reply write: one receipt, one reply, the caller gets it', crashInRequests, {
    requires: ['streams'],
  }),
]);
