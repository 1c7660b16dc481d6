import assert from 'node:assert/strict';
import { CairnError, defineWorkflow, type Engine, type AnyWorkflowDefinition } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld, storesFor, type EngineWorld } from './engine-world.js';

/** Far beyond every case's span: wake-ups come from releases, not from the loop or the recheck. */
const PARKED_MS = 400 * 24 * 3_600_000;
const SECOND = 1_000;
const MINUTE = 60 * SECOND;

/** Only on stores with `slots`; the others are skipped by name. */
const NEEDS_SLOTS = { requires: ['slots' as const] };

/** Body starts and ends, in the order they happened, as seen from outside the engines. */
type Ledger = { run: string; event: 'start' | 'end'; at: number; tag: string }[];

/** The most bodies running at once, from the ledger's order of events. */
function maxOverlap(ledger: Ledger): number {
  let running = 0;
  let max = 0;
  for (const entry of ledger) {
    running += entry.event === 'start' ? 1 : -1;
    max = Math.max(max, running);
  }
  return max;
}

/** The most starts (clock times) that fall in any window of `periodMs` (a sliding window). */
function maxInWindow(starts: number[], periodMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= periodMs) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

/** A gate a body waits on until the case opens it (or the body's signal aborts). */
function gate(): { wait(signal: AbortSignal): Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    open,
    wait: (signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        void opened.then(resolve);
      }),
  };
}

/** The store as a process cut off from it sees it after `cut()`: every call fails with STORE_ERROR. */
function severable(store: WorkflowStore): { store: WorkflowStore; cut(): void } {
  let cut = false;
  const wrap = <T extends object>(noun: T): T =>
    new Proxy(noun, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          cut ? Promise.reject(new CairnError('STORE_ERROR', 'this process lost the store')) : (value as (...a: unknown[]) => unknown).apply(target, args);
      },
    });
  const nouns = ['runs', 'steps', 'events', 'state', 'versions', 'history', 'schedules', 'slots'] as const;
  const wrapped = Object.create(store) as Record<string, unknown>;
  for (const noun of nouns) if (store[noun] !== undefined) wrapped[noun] = wrap(store[noun] as object);
  return { store: wrapped as unknown as WorkflowStore, cut: () => void (cut = true) };
}

async function completedRuns(w: EngineWorld, workflow: string): Promise<number> {
  const { runs } = await w.raw.runs.list({ workflow, status: 'completed', limit: 1000 });
  return runs.length;
}

/**
 * Starts `count` runs, round robin over `engines`, one clock millisecond apart (creation order is
 * line order). With `settle`, each start's work ends before the clock moves: a rate limit bounds
 * the clock times of its takes, and a case that checks it by body start times needs each body to
 * start at its take's time — over a real server, the first executions would otherwise still be in
 * flight (a slot taken, the body not yet started) when the next millisecond begins.
 */
async function startRuns(
  w: EngineWorld,
  engines: Engine[],
  workflow: AnyWorkflowDefinition,
  inputs: unknown[],
  priorities: number[] = [],
  settle = false,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const handle = await engines[i % engines.length]!.startRun(workflow, inputs[i], priorities[i] ? { priority: priorities[i] } : {});
    ids.push(handle.id);
    if (settle) await w.settle();
    await w.clock.advance(1);
  }
  return ids;
}

/** Engine scenarios: concurrency limits per key, start and step rate limits, priorities. */
export const flowControlGroup: CaseGroup = caseGroup('engine.flow-control', 'engine: flow control', [
  conformanceCase(
    'a concurrency limit of 2 holds at every instant under racing claims from 4 engines, and every run completes',
    async (env) => {
      const ledger: Ledger = [];
      // Bound to the world's clock once it exists (the workflow is defined before it).
      let clockNow = () => 0;
      let sleepOn = (_signal: AbortSignal, _ms: number) => Promise.resolve();
      const limited = defineWorkflow(
        'fc-limited',
        async (ctx, input: { n: number }) =>
          ctx.step('work', async (s) => {
            ledger.push({ run: s.runId, event: 'start', at: clockNow(), tag: String(input.n) });
            await sleepOn(s.signal, 2 * SECOND);
            ledger.push({ run: s.runId, event: 'end', at: clockNow(), tag: String(input.n) });
            return input.n;
          }),
        { concurrency: { limit: 2 } },
      );
      const w = await engineWorld(env, [limited], { recoveryIntervalMs: PARKED_MS });
      clockNow = () => w.clock.now();
      sleepOn = (signal, ms) => w.clock.sleep(ms, signal);
      const stores = await storesFor(env, 4);
      const engines = [w.engine, ...(await Promise.all(stores.slice(1).map((store) => w.startEngine([limited], { store, recoveryIntervalMs: PARKED_MS }))))];
      const ids = await startRuns(
        w,
        engines,
        limited,
        Array.from({ length: 12 }, (_, n) => ({ n })),
      );
      await w.runUntil('all 12 runs completed', async () => (await completedRuns(w, 'fc-limited')) === ids.length, { maxTimers: 400 });
      assert.equal(ledger.filter((e) => e.event === 'start').length, 12, `each body ran once: ${JSON.stringify(ledger)}`);
      assert.equal(maxOverlap(ledger), 2, `at most 2 bodies at once, and the limit was used: ${JSON.stringify(ledger)}`);
      const snapshot = await env.store.slots!.inspect('c:10:fc-limited', w.clock.now());
      assert.deepEqual(snapshot, { holders: [], waiters: [] }, 'every slot was released and nobody waits');
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'one busy key does not starve another: a run of key B completes while key A has a backlog',
    async (env) => {
      const g = gate();
      const tenants = defineWorkflow(
        'fc-tenants',
        async (ctx, input: { tenant: string }) => ctx.step('work', async (s) => (input.tenant === 'a' ? g.wait(s.signal) : undefined)),
        {
          concurrency: { limit: 1, key: (input: { tenant: string }) => input.tenant },
        },
      );
      const w = await engineWorld(env, [tenants], { recoveryIntervalMs: PARKED_MS, timings: { slotRecheckMs: PARKED_MS } });
      await startRuns(
        w,
        [w.engine],
        tenants,
        Array.from({ length: 10 }, () => ({ tenant: 'a' })),
      );
      const [b] = await startRuns(w, [w.engine], tenants, [{ tenant: 'b' }]);
      await w.settle();
      const run = await w.raw.runs.get(b!);
      assert.equal(run?.status, 'completed', `key B's run completed while key A held its slot (${run?.status})`);
      assert.equal(await completedRuns(w, 'fc-tenants'), 1, 'only B is done: A has one executing and nine waiting');
      const a = await env.store.slots!.inspect('c:10:fc-tenants:a', w.clock.now());
      assert.equal(a.holders.length, 1);
      assert.equal(a.waiters.length, 9);
      g.open();
      await w.settle();
      assert.equal(await completedRuns(w, 'fc-tenants'), 11, 'then key A drains, each release waking the next');
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'a waiting run starts when the slot frees, through the wake-up (recovery loop and recheck parked), and a sleeping run gives its slot up',
    async (env) => {
      const g = gate();
      const started: string[] = [];
      const one = defineWorkflow(
        'fc-one',
        async (ctx, input: { name: string; sleep?: boolean }) => {
          await ctx.step('work', async (s) => {
            started.push(input.name);
            if (input.name === 'first') await g.wait(s.signal);
          });
          if (input.sleep) await ctx.sleep('nap', '1h');
          return input.name;
        },
        { concurrency: { limit: 1 } },
      );
      const w = await engineWorld(env, [one], { recoveryIntervalMs: PARKED_MS, timings: { slotRecheckMs: PARKED_MS } });
      // Settled after each start: two executions that begin together race for the free slot, and
      // either may win (seen on MariaDB under load: the second took it). Here the first holds it.
      const [first, second] = await startRuns(w, [w.engine], one, [{ name: 'first' }, { name: 'second', sleep: true }], [], true);
      await w.settle();
      assert.deepEqual(started, ['first'], 'the second waits for the slot');
      assert.equal((await w.raw.runs.get(second!))?.status, 'waiting');
      const timeBefore = w.clock.now();
      g.open();
      await w.settle();
      assert.equal((await w.raw.runs.get(first!))?.status, 'completed');
      assert.deepEqual(started, ['first', 'second'], 'the release woke the second run: no timer fired, no recovery pass');
      assert.equal(w.clock.now(), timeBefore, 'the clock did not move');
      // The second run sleeps for an hour: it gave its slot up, so a third run executes meanwhile.
      const [third] = await startRuns(w, [w.engine], one, [{ name: 'third' }]);
      await w.settle();
      assert.equal((await w.raw.runs.get(second!))?.status, 'waiting', 'the second run sleeps');
      assert.equal((await w.raw.runs.get(third!))?.status, 'completed', 'the third ran while the second slept');
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'the slot of an engine cut off from the store frees itself with its lease, and the waiter then runs',
    async (env) => {
      const g = gate();
      const ledger: Ledger = [];
      let executions = 0;
      const held = defineWorkflow(
        'fc-held',
        async (ctx, input: { name: string }) =>
          ctx.step('work', async (s) => {
            executions += 1;
            ledger.push({ run: s.runId, event: 'start', at: 0, tag: input.name });
            try {
              // Only the first execution of the first run hangs: it is the one whose engine dies.
              if (input.name === 'victim' && executions === 1) await g.wait(s.signal);
            } finally {
              ledger.push({ run: s.runId, event: 'end', at: 0, tag: input.name });
            }
            return input.name;
          }),
        { concurrency: { limit: 1 } },
      );
      // Recovery every 7 s, not 10: the victim's lease and slot end 30 s after its claim, where the
      // waiter's recheck falls, and a recovery pass at that same instant would race it — a holder
      // re-asking for its own expired entry before anyone took it over keeps it (the store
      // contract lets a late holder revive its entry), so the order of the two would be a coin
      // toss (seen once on FerretDB under load). With 7 s the pass after the expiry is at 35 s.
      const w = await engineWorld(env, [held], { recoveryIntervalMs: 7 * SECOND });
      const [peer] = await storesFor(env, 2).then((s) => s.slice(1));
      const doomed = severable(peer!);
      const dying = await w.startEngine([held], { store: doomed.store, recoveryIntervalMs: PARKED_MS });
      const [victim] = await startRuns(w, [dying], held, [{ name: 'victim' }]);
      await w.settle();
      const [waiter] = await startRuns(w, [w.engine], held, [{ name: 'waiter' }]);
      await w.settle();
      assert.equal((await w.raw.runs.get(waiter!))?.status, 'waiting', "the waiter waits for the victim's slot");
      doomed.cut();
      await w.runToEnd(waiter!, { maxTimers: 200 });
      await w.runToEnd(victim!, { maxTimers: 200 });
      assert.equal((await w.raw.runs.get(victim!))?.status, 'completed', 'the victim is taken over and completes after the waiter');
      const order = ledger.filter((e) => e.event === 'start').map((e) => e.tag);
      assert.deepEqual(order, ['victim', 'waiter', 'victim'], "the waiter ran once the dead holder's lease ended; then the victim again");
      g.open();
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'a start rate limit of 3 per minute holds over a sliding window; no run is dropped',
    async (env) => {
      const starts: number[] = [];
      let clockNow = () => 0;
      const rated = defineWorkflow(
        'fc-rated',
        async (ctx, input: { n: number }) =>
          ctx.step('work', () => {
            starts.push(clockNow());
            return input.n;
          }),
        { rateLimit: { limit: 3, period: '1m' } },
      );
      const w = await engineWorld(env, [rated], { recoveryIntervalMs: PARKED_MS });
      clockNow = () => w.clock.now();
      const ids = await startRuns(
        w,
        [w.engine],
        rated,
        Array.from({ length: 10 }, (_, n) => ({ n })),
        [],
        true,
      );
      await w.runUntil('all 10 runs completed', async () => (await completedRuns(w, 'fc-rated')) === ids.length, { maxTimers: 400 });
      assert.equal(starts.length, 10, 'every run started once');
      assert.equal(maxInWindow(starts, MINUTE), 3, `at most 3 starts in any minute: ${starts.map((t) => t - starts[0]!).join(', ')}`);
      assert.ok(starts.at(-1)! - starts[0]! >= 3 * MINUTE, 'ten starts at three a minute take over three minutes');
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'a step rate limit of 2 per 10 s holds across two engines; every call runs once',
    (env) => stepRateCase(env, { workflow: 'fc-caller', key: 'the-api', runs: 7, queued: false }),
    NEEDS_SLOTS,
  ),

  conformanceCase(
    "a queued step's rate limit of 2 per 10 s holds across two engines' step workers; every call runs once",
    (env) => stepRateCase(env, { workflow: 'fc-queued-caller', key: 'the-queued-api', runs: 5, queued: true }),
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'priorities order the runs waiting for a slot: priority first, then creation order',
    async (env) => {
      const g = gate();
      const started: string[] = [];
      const ordered = defineWorkflow(
        'fc-ordered',
        async (ctx, input: { name: string }) =>
          ctx.step('work', async (s) => {
            started.push(input.name);
            if (input.name === 'holder') await g.wait(s.signal);
          }),
        { concurrency: { limit: 1 } },
      );
      const w = await engineWorld(env, [ordered], { recoveryIntervalMs: PARKED_MS, timings: { slotRecheckMs: PARKED_MS } });
      await startRuns(w, [w.engine], ordered, [{ name: 'holder' }]);
      await w.settle();
      const names = ['p0-a', 'p5-a', 'p-3', 'p5-b', 'p0-b', 'p1000'];
      const ids = await startRuns(
        w,
        [w.engine],
        ordered,
        names.map((name) => ({ name })),
        [0, 5, -3, 5, 0, 1000],
      );
      await w.settle();
      const stored = await Promise.all(ids.map((id) => w.raw.runs.get(id)));
      assert.deepEqual(
        stored.map((r) => r?.priority),
        [undefined, 5, -3, 5, undefined, 1000],
        'priority is stored, 0 as absent',
      );
      g.open();
      await w.settle();
      assert.deepEqual(started, ['holder', 'p1000', 'p5-a', 'p5-b', 'p0-a', 'p0-b', 'p-3']);
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'bad flow options are refused with INVALID_INPUT and create nothing',
    async (env) => {
      const bad: [string, object][] = [
        ['limit 0', { concurrency: { limit: 0 } }],
        ['fractional limit', { concurrency: { limit: 1.5 } }],
        ['limit over 10,000', { rateLimit: { limit: 10_001, period: '1s' } }],
        ['period 0', { rateLimit: { limit: 1, period: 0 } }],
        ['malformed period', { rateLimit: { limit: 1, period: 'soon' } }],
        ['key not a function', { concurrency: { limit: 1, key: 'tenant' } }],
        ['unknown option', { concurrency: { limit: 1, burst: 2 } }],
      ];
      for (const [what, options] of bad) {
        assert.throws(
          () => defineWorkflow('fc-bad', async () => null, options),
          (error: unknown) => CairnError.is(error, 'INVALID_INPUT'),
          what,
        );
      }
      const keyed = defineWorkflow('fc-keyed', async (ctx, _input: { tenant: unknown }) => ctx.step('s', () => 1), {
        concurrency: { limit: 1, key: (input: { tenant: unknown }) => input.tenant as string },
      });
      const thrower = defineWorkflow('fc-thrower', async () => 1, {
        rateLimit: {
          limit: 1,
          period: '1s',
          key: () => {
            throw new Error('no key');
          },
        },
      });
      const stepper = defineWorkflow('fc-stepper', async (ctx, input: { limit: number }) => {
        try {
          await ctx.step('s', () => 1, { rateLimit: { key: 'api', limit: input.limit, period: '1s' } });
          return 'ran';
        } catch (error) {
          return CairnError.is(error) ? error.code : 'other';
        }
      });
      const w = await engineWorld(env, [keyed, thrower, stepper], { recoveryIntervalMs: PARKED_MS });
      for (const priority of [1001, -1001, 1.5, '1', Number.NaN]) {
        await rejectsWithCode(w.engine.startRun(keyed, { tenant: 'a' }, { priority: priority as number }), 'INVALID_INPUT', `priority ${String(priority)}`);
      }
      await rejectsWithCode(w.engine.startRun(keyed, { tenant: 42 }), 'INVALID_INPUT', 'a key that is not a string');
      await rejectsWithCode(w.engine.startRun(keyed, { tenant: '' }), 'INVALID_INPUT', 'an empty key');
      await rejectsWithCode(w.engine.startRun(keyed, { tenant: 'x'.repeat(600) }), 'INVALID_INPUT', 'a key over 512 characters');
      await rejectsWithCode(w.engine.startRun(thrower, null), 'INVALID_INPUT', 'a key function that throws');
      const { runs } = await w.raw.runs.list({ limit: 10 });
      assert.deepEqual(runs, [], 'nothing was created');
      const step = await w.engine.startRun(stepper, { limit: 0 });
      assert.equal((await w.runToEnd(step.id)).output, 'INVALID_INPUT', 'a step rate limit of 0 throws INVALID_INPUT into the workflow');
    },
    NEEDS_SLOTS,
  ),
]);

/**
 * Two engines on two store instances run `runs` runs whose one step (inline or queued) takes a
 * rate slot of 2 per 10 s: every call runs once and no 10 s window holds more than 2 calls.
 */
async function stepRateCase(env: CaseEnv, o: { workflow: string; key: string; runs: number; queued: boolean }): Promise<void> {
  const calls: number[] = [];
  let clockNow = () => 0;
  const caller = defineWorkflow(o.workflow, async (ctx, input: { n: number }) =>
    ctx.step(
      'call-api',
      () => {
        calls.push(clockNow());
        return input.n;
      },
      { queued: o.queued, rateLimit: { key: o.key, limit: 2, period: '10s' } },
    ),
  );
  const w = await engineWorld(env, [caller], { recoveryIntervalMs: PARKED_MS });
  clockNow = () => w.clock.now();
  const [peer] = await storesFor(env, 2).then((s) => s.slice(1));
  const other = await w.startEngine([caller], { store: peer!, recoveryIntervalMs: PARKED_MS });
  const ids = await startRuns(
    w,
    [w.engine, other],
    caller,
    Array.from({ length: o.runs }, (_, n) => ({ n })),
    [],
    true,
  );
  await w.runUntil(`all ${o.runs} runs completed`, async () => (await completedRuns(w, o.workflow)) === ids.length, { maxTimers: 400 });
  assert.equal(calls.length, o.runs, 'every call ran once');
  assert.equal(maxInWindow(calls, 10 * SECOND), 2, `at most 2 calls in any 10 s: ${calls.map((t) => t - calls[0]!).join(', ')}`);
}
