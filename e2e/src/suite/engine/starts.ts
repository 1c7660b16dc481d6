import assert from 'node:assert/strict';
import { CairnError, defineWorkflow, type Engine, type RunHandle } from '@cairn/core';
import { createFaults, SimulatedCrash, type FaultInjector } from '@cairn/core/testing';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld, storesFor, type EngineWorld } from './engine-world.js';

/** Far beyond every case's span: wake-ups come from the runs' ends, not from the loop or the recheck. */
const PARKED_MS = 400 * 24 * 3_600_000;

/** Only on stores with `slots` (the singleton's line pointer); the others are skipped by name. */
const NEEDS_SLOTS = { requires: ['slots' as const] };

/** Bodies that wait until the case lets each one end, with an outside ledger of starts and ends. */
function gates() {
  const opened = new Map<string, () => void>();
  const waiting = new Map<string, Promise<void>>();
  const ledger: { run: string; event: 'start' | 'end' }[] = [];
  const promiseOf = (run: string) => {
    let p = waiting.get(run);
    if (p === undefined) {
      p = new Promise<void>((resolve) => opened.set(run, resolve));
      waiting.set(run, p);
    }
    return p;
  };
  return {
    ledger,
    async body(run: string, signal: AbortSignal): Promise<void> {
      ledger.push({ run, event: 'start' });
      await Promise.race([
        promiseOf(run),
        new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true })),
      ]);
      ledger.push({ run, event: 'end' });
    },
    open(run: string): void {
      promiseOf(run);
      opened.get(run)!();
    },
    started: () => ledger.filter((e) => e.event === 'start').map((e) => e.run),
    maxOverlap(): number {
      let running = 0;
      let max = 0;
      for (const entry of ledger) {
        running += entry.event === 'start' ? 1 : -1;
        max = Math.max(max, running);
      }
      return max;
    },
  };
}

/** A workflow whose one step waits on its gate in `g`, returning `input.n`. */
function gatedWorkflow(name: string, g: ReturnType<typeof gates>) {
  return defineWorkflow(name, async (ctx, input: { n: number }) => {
    await ctx.step('work', (s) => g.body(s.runId, s.signal));
    return input.n;
  });
}

async function runsOf(w: EngineWorld, workflow: string) {
  return (await w.raw.runs.list({ workflow, limit: 1000 })).runs;
}

async function statusOf(w: EngineWorld, id: string) {
  return (await w.raw.runs.get(id))?.status;
}

/** Engine scenarios: singleton (skip and queue), debounce and batch starts, across engines on one store, with crashes. */
export const startsGroup: CaseGroup = caseGroup('engine.starts', 'engine: singleton, debounce and batch starts', [
  conformanceCase(
    "singleton 'skip': 12 starts racing from 4 engines make one run and all get its handle; after it ends the next start makes a new one",
    async (env) => {
      const g = gates();
      const wf = gatedWorkflow('st-skip', g);
      const w = await engineWorld(env, [wf], { recoveryIntervalMs: PARKED_MS });
      const stores = await storesFor(env, 4);
      const engines: Engine[] = [
        w.engine,
        ...(await Promise.all(stores.slice(1).map((store) => w.startEngine([wf], { store, recoveryIntervalMs: PARKED_MS })))),
      ];
      const handles = await Promise.all(
        Array.from({ length: 12 }, (_, n) => engines[n % 4]!.startRun(wf, { n }, { singleton: { key: 'account-7', mode: 'skip' } })),
      );
      const ids = new Set(handles.map((h) => h.id));
      assert.equal(ids.size, 1, `every start got the same run: ${[...ids].join(', ')}`);
      assert.equal(handles.filter((h) => h.created).length, 1, 'exactly one start created it');
      assert.equal((await runsOf(w, 'st-skip')).length, 1, 'one run exists');
      const [first] = ids;
      await w.settle();
      assert.deepEqual(g.started(), [first], 'its body started');
      const again = await engines[2]!.startRun(wf, { n: 99 }, { singleton: { key: 'account-7', mode: 'skip' } });
      assert.equal(again.id, first, 'a start while it runs returns it');
      assert.equal(again.created, false);
      const other = await engines[1]!.startRun(wf, { n: 50 }, { singleton: { key: 'account-8', mode: 'skip' } });
      assert.notEqual(other.id, first, 'another key is another line');
      g.open(first!);
      g.open(other.id);
      await w.runToEnd(first!);
      const next = await engines[3]!.startRun(wf, { n: 100 }, { singleton: { key: 'account-7', mode: 'skip' } });
      assert.equal(next.created, true, 'the run ended: the next start makes a new one');
      assert.notEqual(next.id, first);
      g.open(next.id);
      await w.runToEnd(next.id);
      assert.equal(await next.result(), 100);
      assert.equal(g.maxOverlap() <= 2, true, 'one body per key at most (two keys)');
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    "singleton 'queue': 9 starts racing from 3 engines run one at a time, each after the one before it in line has ended, all complete",
    async (env) => {
      const g = gates();
      const wf = gatedWorkflow('st-queue', g);
      const w = await engineWorld(env, [wf], { recoveryIntervalMs: PARKED_MS, timings: { slotRecheckMs: PARKED_MS } });
      const stores = await storesFor(env, 3);
      const engines: Engine[] = [
        w.engine,
        ...(await Promise.all(stores.slice(1).map((store) => w.startEngine([wf], { store, recoveryIntervalMs: PARKED_MS })))),
      ];
      const handles = await Promise.all(Array.from({ length: 9 }, (_, n) => engines[n % 3]!.startRun(wf, { n }, { singleton: { key: 'k', mode: 'queue' } })));
      assert.equal(new Set(handles.map((h) => h.id)).size, 9, 'every start made its own run');
      assert.ok(handles.every((h) => h.created));
      // The line, as the store decided it: each run's idempotency key names the one before it.
      const line: string[] = [];
      const byPredecessor = new Map<string, string>();
      for (const h of handles) {
        const run = await w.raw.runs.get(h.id);
        const key = run!.idempotencyKey!;
        byPredecessor.set(key.slice(key.lastIndexOf(':after:') + ':after:'.length), h.id);
      }
      for (let at = byPredecessor.get(''); at !== undefined; at = byPredecessor.get(at)) line.push(at);
      assert.equal(line.length, 9, `the runs form one line: ${JSON.stringify([...byPredecessor])}`);
      for (const id of line) {
        await w.settle();
        assert.deepEqual(g.started(), line.slice(0, line.indexOf(id) + 1), 'the runs start one by one, in line order');
        g.open(id);
        await w.runUntil(`run ${id} completed`, async () => (await statusOf(w, id)) === 'completed');
      }
      assert.equal(g.maxOverlap(), 1, `one body at a time: ${JSON.stringify(g.ledger)}`);
      const outputs = await Promise.all(handles.map((h) => h.result()));
      assert.deepEqual(outputs, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    "singleton 'queue': a cancelled queued run keeps its place until the runs ahead end, so the one behind it never overtakes",
    async (env) => {
      const g = gates();
      const wf = defineWorkflow('st-cancel', async (ctx) => {
        await ctx.step('work', (s) => g.body(s.runId, s.signal));
      });
      const w = await engineWorld(env, [wf], { recoveryIntervalMs: PARKED_MS, timings: { slotRecheckMs: PARKED_MS } });
      const start = () => w.engine.startRun(wf, undefined, { singleton: { key: 'k', mode: 'queue' } });
      const a = await start();
      const b = await start();
      const c = await start();
      await w.settle();
      assert.deepEqual(g.started(), [a.id]);
      await w.engine.cancel(b.id);
      await w.settle();
      assert.deepEqual(g.started(), [a.id], 'c waits while a runs, though b was cancelled');
      assert.equal(await statusOf(w, c.id), 'waiting');
      g.open(a.id);
      await w.runUntil('c started', async () => g.started().includes(c.id));
      assert.equal(await statusOf(w, a.id), 'completed');
      assert.equal(await statusOf(w, b.id), 'cancelled', 'b ended when its turn came, without running');
      assert.deepEqual(g.started(), [a.id, c.id]);
      g.open(c.id);
      await w.runToEnd(c.id);
      // A singleton run is not retried: its successors may have started since.
      await rejectsWithCode(w.engine.retryRun(b.id), 'RUN_CONFLICT');
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'crashes: a start that died between creating its run and moving the line pointer, and a run that ended without waking the next, lose nothing',
    async (env) => {
      const g = gates();
      const wf = gatedWorkflow('st-crash', g);
      const scripted = createFaults([{ point: 'after-checkpoint', stepKey: '\u0001start:created' }]);
      // A crash right after a run's outcome is written (the site without a step key), armed below.
      let outcomeOf: string | undefined;
      const faults: FaultInjector = {
        hit(site) {
          if (site.point === 'after-checkpoint' && site.stepKey === undefined && site.runId === outcomeOf) {
            outcomeOf = undefined;
            throw new SimulatedCrash(site);
          }
          scripted.hit(site);
        },
      };
      // Recovery runs (every 10 s of clock): the crashed start's run was never dispatched.
      const w = await engineWorld(env, [wf], { faults });
      const stores = await storesFor(env, 2);
      // Either engine may execute the runs: both crash where the case says.
      const other = await w.startEngine([wf], { store: stores[1]!, faults });
      // The first start "dies" after its create: the caller sees the crash, the run exists.
      await assert.rejects(w.engine.startRun(wf, { n: 1 }, { singleton: { key: 'k', mode: 'skip' } }), /Simulated crash/);
      const [created] = await runsOf(w, 'st-crash');
      assert.ok(created, 'the run was created before the crash');
      const again = await other.startRun(wf, { n: 2 }, { singleton: { key: 'k', mode: 'skip' } });
      assert.equal(again.id, created.id, 'a later skip start finds it by walking the line');
      assert.equal(again.created, false);
      const queued = await other.startRun(wf, { n: 3 }, { singleton: { key: 'k', mode: 'queue' } });
      assert.notEqual(queued.id, created.id);
      await w.runUntil('the first run started', async () => g.started().includes(created.id));
      assert.deepEqual(g.started(), [created.id], 'the queued run waits behind it');
      // The first run ends in a process that dies right after writing its outcome, before it wakes
      // the run behind it: that run starts at its recheck.
      outcomeOf = created.id;
      g.open(created.id);
      await w.runUntil('the queued run started', async () => g.started().includes(queued.id), { maxTimers: 50 });
      assert.equal(outcomeOf, undefined, 'the crash after the outcome happened');
      assert.equal(await statusOf(w, created.id), 'completed');
      g.open(queued.id);
      await w.runToEnd(queued.id);
      assert.equal(await queued.result(), 3);
      assert.equal(g.maxOverlap(), 1);
      assert.equal((await runsOf(w, 'st-crash')).length, 2);
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    "a workflow's default singleton keys runs by their input; startRun's own overrides it",
    async (env) => {
      const g = gates();
      const wf = defineWorkflow(
        'st-default',
        async (ctx, input: { tenant: string }) => {
          await ctx.step('work', (s) => g.body(s.runId, s.signal));
          return input.tenant;
        },
        { singleton: { key: (input: { tenant: string }) => input.tenant, mode: 'skip' } },
      );
      const w = await engineWorld(env, [wf], { recoveryIntervalMs: PARKED_MS });
      const a1 = await w.engine.startRun(wf, { tenant: 'a' });
      const a2 = await w.engine.startRun(wf, { tenant: 'a' });
      const b1 = await w.engine.startRun(wf, { tenant: 'b' });
      assert.equal(a2.id, a1.id);
      assert.notEqual(b1.id, a1.id);
      const a3 = await w.engine.startRun(wf, { tenant: 'a' }, { singleton: { key: 'a', mode: 'queue' } });
      assert.notEqual(a3.id, a1.id, "startRun's queue mode overrides the default skip");
      assert.equal(a3.created, true);
      for (const h of [a1, b1, a3] as RunHandle[]) g.open(h.id);
      await w.runToEnd(a3.id);
      assert.equal(await statusOf(w, a1.id), 'completed');
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'bad singleton options are refused with INVALID_INPUT and create nothing',
    async (env) => {
      const wf = defineWorkflow('st-bad', async () => 1);
      const w = await engineWorld(env, [wf], { recoveryIntervalMs: PARKED_MS });
      const bad: unknown[] = [
        {},
        { key: 'k' },
        { key: 'k', mode: 'later' },
        { key: '', mode: 'skip' },
        { key: 7, mode: 'skip' },
        { key: 'x'.repeat(257), mode: 'queue' },
        { key: 'a\u0000b', mode: 'skip' },
        { key: () => 'k', mode: 'skip' },
        { key: 'k', mode: 'skip', extra: 1 },
        'k',
        null,
      ];
      for (const singleton of bad) {
        await rejectsWithCode(w.engine.startRun(wf, 1, { singleton } as never), 'INVALID_INPUT', JSON.stringify(singleton));
      }
      await rejectsWithCode(w.engine.startRun(wf, 1, { singleton: { key: 'k', mode: 'skip' }, idempotencyKey: 'i' }), 'INVALID_INPUT');
      await rejectsWithCode(w.engine.startRun(wf, 1, { idempotencyKey: '\u0001singleton:1:k:after:' }), 'INVALID_INPUT');
      const badWindows: unknown[] = [
        { debounce: { key: 'k', period: 0 } },
        { debounce: { key: 'k', period: -5 } },
        { debounce: { key: '', period: 1000 } },
        { debounce: { key: 'k' } },
        { debounce: { period: 1000 } },
        { batch: { maxSize: 0, maxWait: 1000 } },
        { batch: { maxSize: 1001, maxWait: 1000 } },
        { batch: { maxSize: 2.5, maxWait: 1000 } },
        { batch: { maxSize: 3, maxWait: 0 } },
        { batch: { maxSize: 3 } },
        { batch: { key: '', maxSize: 3, maxWait: 1000 } },
        { debounce: { key: 'k', period: 1000 }, batch: { maxSize: 3, maxWait: 1000 } },
        { debounce: { key: 'k', period: 1000 }, singleton: { key: 'k', mode: 'skip' } },
        { debounce: { key: 'k', period: 1000 }, idempotencyKey: 'i' },
        { batch: { maxSize: 3, maxWait: 1000 }, idempotencyKey: 'i' },
      ];
      for (const options of badWindows) {
        await rejectsWithCode(w.engine.startRun(wf, 1, options as never), 'INVALID_INPUT', JSON.stringify(options));
      }
      assert.throws(
        () => defineWorkflow('st-bad-both', async () => 1, { debounce: { key: 'k', period: 10 }, batch: { maxSize: 2, maxWait: 10 } }),
        (error: unknown) => CairnError.is(error, 'INVALID_INPUT'),
      );
      const any = await w.engine.startRun(wf, 1);
      await rejectsWithCode(w.engine.sendEvent(any.id, '\u0001start:seat', { input: 2, at: 0 }), 'INVALID_INPUT');
      await rejectsWithCode(w.engine.sendEvent(any.id, 'x', 1, { idempotencyKey: '\u0001start:seat:1' }), 'INVALID_INPUT');
      assert.throws(
        () => defineWorkflow('st-bad-default', async () => 1, { singleton: { key: 'k', mode: 'sometimes' } } as never),
        (error: unknown) => CairnError.is(error, 'INVALID_INPUT'),
      );
      const throwing = defineWorkflow('st-bad-key', async () => 1, {
        singleton: {
          key: () => {
            throw new Error('no key');
          },
          mode: 'skip',
        },
      });
      const w2 = await w.startEngine([throwing]);
      await rejectsWithCode(w2.startRun(throwing, 1), 'INVALID_INPUT');
      assert.equal((await runsOf(w, 'st-bad')).length + (await runsOf(w, 'st-bad-key')).length, 1, 'nothing was created but the one good run');
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'debounce: 5 starts from 3 engines 1 s apart make one run, started 10 s after the last with its input; a start after that makes a new run',
    async (env) => {
      const bodies: { run: string; input: unknown; at: number }[] = [];
      let now = () => 0;
      const wf = defineWorkflow('st-debounce', async (ctx, input: { n: number }) => {
        await ctx.step('work', async (s) => void bodies.push({ run: s.runId, input, at: now() }));
        return input.n;
      });
      const w = await engineWorld(env, [wf]);
      now = () => w.clock.now();
      const stores = await storesFor(env, 3);
      const engines: Engine[] = [w.engine, ...(await Promise.all(stores.slice(1).map((store) => w.startEngine([wf], { store }))))];
      const handles: RunHandle[] = [];
      let lastStart = 0;
      for (let n = 0; n < 5; n++) {
        lastStart = w.clock.now();
        handles.push(await engines[n % 3]!.startRun(wf, { n }, { debounce: { key: 'doc-1', period: '10s' } }));
        await w.settle();
        await w.clock.advance(1_000);
        await w.settle();
      }
      assert.equal(new Set(handles.map((h) => h.id)).size, 1, 'every start got the same run');
      assert.deepEqual(
        handles.map((h) => h.created),
        [true, false, false, false, false],
      );
      assert.equal(bodies.length, 0, 'nothing started within the period');
      const run = await w.runToEnd(handles[0]!.id);
      assert.equal(run.output, 4, 'the run had the last input');
      assert.equal(bodies.length, 1, `one body: ${JSON.stringify(bodies)}`);
      assert.ok(bodies[0]!.at >= lastStart + 10_000, `started ${bodies[0]!.at - lastStart} ms after the last start, not before 10 s`);
      const later = await engines[1]!.startRun(wf, { n: 9 }, { debounce: { key: 'doc-1', period: '10s' } });
      assert.equal(later.created, true, 'the window had closed: a new run');
      assert.notEqual(later.id, handles[0]!.id);
      const other = await engines[2]!.startRun(wf, { n: 7 }, { debounce: { key: 'doc-2', period: '10s' } });
      assert.notEqual(other.id, later.id, 'another key is another window');
      await w.runToEnd(later.id);
      await w.runToEnd(other.id);
      assert.equal(await later.result(), 9);
      assert.equal(await other.result(), 7);
      assert.equal((await runsOf(w, 'st-debounce')).length, 3);
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'batch: maxSize 3 groups 7 starts as [1,2,3] [4,5,6] at once and [7] after maxWait; every start gets the handle of the run holding its input',
    async (env) => {
      const bodies: { input: unknown; at: number }[] = [];
      let now = () => 0;
      const wf = defineWorkflow('st-batch', async (ctx, items: number[]) => {
        await ctx.step('work', async () => void bodies.push({ input: items, at: now() }));
        return items;
      });
      const w = await engineWorld(env, [wf]);
      now = () => w.clock.now();
      const start = w.clock.now();
      const handles: RunHandle[] = [];
      for (let n = 1; n <= 7; n++) handles.push(await w.engine.startRun(wf, n as never, { batch: { maxSize: 3, maxWait: '5s' } }));
      assert.deepEqual(
        handles.map((h) => h.created),
        [true, false, false, true, false, false, true],
      );
      assert.equal(new Set(handles.map((h) => h.id)).size, 3);
      await w.settle();
      assert.deepEqual(
        bodies.map((b) => b.input),
        [
          [1, 2, 3],
          [4, 5, 6],
        ],
        'the full batches started at once',
      );
      assert.ok(
        bodies.every((b) => b.at === start),
        'before any time passed',
      );
      assert.equal(bodies.length, 2, 'the third batch waits for more inputs or maxWait');
      await w.runToEnd(handles[6]!.id);
      assert.deepEqual(await handles[6]!.result(), [7]);
      assert.ok(bodies[2]!.at >= start + 5_000, 'the last batch started after maxWait');
      for (const [i, h] of handles.entries()) assert.ok(((await h.result()) as number[]).includes(i + 1), `start ${i + 1}'s handle holds its input`);
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'batch: 24 starts racing from 3 engines while the clock passes maxWait: every input lands in exactly one run, the one its handle names, at most maxSize per run',
    async (env) => {
      // Each run stays open a while after its window closed, so later starts find it started.
      const wf = defineWorkflow('st-batch-race', async (ctx, items: number[]) => {
        await ctx.sleep('hold', 2_000);
        return items;
      });
      const w = await engineWorld(env, [wf]);
      const stores = await storesFor(env, 3);
      const engines: Engine[] = [w.engine, ...(await Promise.all(stores.slice(1).map((store) => w.startEngine([wf], { store }))))];
      const handles: RunHandle[] = [];
      for (let round = 0; round < 8; round++) {
        // Three starts at once, while windows close on their own time (maxWait) in the middle of them.
        const three = Array.from({ length: 3 }, (_, i) => round * 3 + i);
        const started = Promise.all(three.map((n) => engines[n % 3]!.startRun(wf, n as never, { batch: { key: 'b', maxSize: 10, maxWait: 1_000 } })));
        await w.clock.advance(round % 2 === 0 ? 250 : 500);
        handles.push(...(await started));
        await w.settle();
      }
      const ids = [...new Set(handles.map((h) => h.id))];
      for (const id of ids) await w.runToEnd(id, { maxTimers: 200 });
      const seen = new Map<number, string>();
      for (const id of ids) {
        const items = (await w.raw.runs.get(id))!.output as number[];
        assert.ok(items.length >= 1 && items.length <= 10, `run ${id} holds ${items.length} inputs`);
        for (const n of items) {
          assert.equal(seen.has(n), false, `input ${n} is in two runs`);
          seen.set(n, id);
        }
      }
      assert.equal(seen.size, 24, `every input landed in a run: ${[...seen.keys()].sort((a, b) => a - b).join(',')}`);
      for (const [n, h] of handles.entries()) assert.equal(seen.get(n), h.id, `input ${n} is in the run its start's handle names`);
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    'crashes: a window run that died after closing its window starts with the same input; a start meanwhile goes to a new run',
    async (env) => {
      const bodies: unknown[] = [];
      const wf = defineWorkflow('st-window-crash', async (ctx, input: unknown) => {
        await ctx.step('work', async () => void bodies.push(input));
        return input;
      });
      const faults = createFaults([{ point: 'after-checkpoint', stepKey: '\u0001start:window-closed', times: 2 }]);
      const w = await engineWorld(env, [wf], { faults });
      const d1 = await w.engine.startRun(wf, 'a', { debounce: { key: 'k', period: 1_000 } });
      await w.engine.startRun(wf, 'b', { debounce: { key: 'k', period: 1_000 } });
      const b1 = await w.engine.startRun(wf, 1 as never, { batch: { maxSize: 5, maxWait: 1_000 } });
      await w.engine.startRun(wf, 2 as never, { batch: { maxSize: 5, maxWait: 1_000 } });
      await w.runUntil('both windows closed and their executions died', async () => faults.crashes.length === 2);
      // The windows are closed: these starts make new runs.
      const d2 = await w.engine.startRun(wf, 'c', { debounce: { key: 'k', period: 1_000 } });
      const b2 = await w.engine.startRun(wf, 3 as never, { batch: { maxSize: 5, maxWait: 1_000 } });
      assert.equal(d2.created && b2.created, true, 'after the close mark, a start goes to a new run');
      assert.equal(bodies.length, 0, 'nothing ran before the crashes');
      for (const h of [d1, b1, d2, b2]) await w.runToEnd(h.id);
      assert.equal(await d1.result(), 'b');
      assert.deepEqual(await b1.result(), [1, 2]);
      assert.equal(await d2.result(), 'c');
      assert.deepEqual(await b2.result(), [3]);
    },
    NEEDS_SLOTS,
  ),

  conformanceCase(
    "a batch run's queued step, and every replay of the run, see the list of inputs",
    async (env) => {
      const wf = defineWorkflow('st-batch-queued', async (ctx, items: number[]) => {
        const sum = await ctx.step('sum', async () => items.reduce((a, b) => a + b, 0), { queued: true });
        await ctx.sleep('nap', 1_000);
        return { sum, items };
      });
      const w = await engineWorld(env, [wf]);
      const handles: RunHandle[] = [];
      for (const n of [1, 2, 3]) handles.push(await w.engine.startRun(wf, n as never, { batch: { maxSize: 3, maxWait: '1m' } }));
      const run = await w.runToEnd(handles[0]!.id);
      assert.deepEqual(run.output, { sum: 6, items: [1, 2, 3] }, JSON.stringify(run.error));
      assert.equal(run.input, 1, "the stored input is the first start's");
    },
    NEEDS_SLOTS,
  ),
]);
