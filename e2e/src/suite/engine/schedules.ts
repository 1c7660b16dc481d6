import assert from 'node:assert/strict';
import { defineSchedule, defineWorkflow, type Engine, type ScheduleDefinition, type AnyWorkflowDefinition } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld, storesFor, type EngineWorld } from './engine-world.js';

/** Engines in the racing cases: "8 engines over one store". */
const ENGINES = 8;
/** Far beyond every case's span: ticks are fired by the case calling `schedules.tick()` on every engine at once. */
const NO_LOOP_MS = 400 * 24 * 3_600_000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const iso = (ms: number) => new Date(ms).toISOString();

/** A workflow that records its input and ends. */
const recorder = defineWorkflow('sched-record', async (ctx, input: unknown) => ctx.step('seen', () => input));
/** A workflow that stays active until it gets the message `finish`. */
const holder = defineWorkflow('sched-hold', async (ctx) => ctx.waitForEvent('finish'));

/** Starts one engine per store with `schedules` declared, the loop parked. */
async function startEngines(w: EngineWorld, stores: WorkflowStore[], workflows: AnyWorkflowDefinition[], schedules: ScheduleDefinition[]): Promise<Engine[]> {
  return Promise.all(stores.map((store) => w.startEngine(workflows, { store, schedules, recoveryIntervalMs: NO_LOOP_MS })));
}

/** Every engine runs a schedule pass at once (the race a tick meets in production), then the runs are let run. */
async function tickAll(w: EngineWorld, engines: Engine[]): Promise<void> {
  await Promise.all(engines.map((e) => e.schedules.tick()));
  await w.settle();
}

/** The idempotency keys of the runs of `workflow`, sorted. */
async function runKeys(w: EngineWorld, workflow: string): Promise<string[]> {
  const { runs } = await w.raw.runs.list({ workflow, limit: 1000 });
  return runs.map((r) => r.idempotencyKey ?? `(no key: ${r.id})`).sort();
}

async function moveTo(w: EngineWorld, at: number): Promise<void> {
  await w.clock.set(at);
  await w.settle();
}

/** A world whose clock is at `start`, with the loop of its first engine parked. */
async function worldAt(env: CaseEnv, start: number, workflows: AnyWorkflowDefinition[], schedules: ScheduleDefinition[] = []) {
  const w = await engineWorld(env, workflows, { recoveryIntervalMs: NO_LOOP_MS, schedules });
  if (start > w.clock.now()) await moveTo(w, start);
  return w;
}

/** Engine scenarios: cron schedules, exactly one run per tick. */
export const schedulesGroup: CaseGroup = caseGroup('engine.schedules', 'engine: schedules', [
  conformanceCase(`${ENGINES} engines, one daily schedule in a DST zone: one run per tick across a restart and both DST changes`, async (env) => {
    const daily = defineSchedule({
      name: 'nightly',
      workflow: recorder,
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      input: (tick: Date) => ({ tick: tick.toISOString() }),
    });
    // 2027: clocks go 02:00 → 03:00 on 28 March and 03:00 → 02:00 on 31 October in Berlin.
    const w = await worldAt(env, Date.UTC(2027, 2, 26, 12), [recorder]);
    const stores = await storesFor(env, ENGINES);
    let engines = await startEngines(w, stores, [recorder], [daily]);
    // Every 15 minutes over each night, so a second tick in a repeated or skipped hour would show.
    const nights = async (from: number, days: number) => {
      for (let t = from; t <= from + days * 24 * HOUR; t += 15 * MINUTE) {
        const hour = new Date(t).getUTCHours();
        if (hour >= 4 && hour < 23) continue;
        await moveTo(w, t);
        await tickAll(w, engines);
      }
    };
    await nights(Date.UTC(2027, 2, 26, 23), 1);
    // A restart: every engine stops, eight new ones take over the same store.
    await Promise.all(engines.map((e) => e.stop()));
    engines = await startEngines(w, stores, [recorder], [daily]);
    await nights(Date.UTC(2027, 2, 27, 23), 2);
    // Paused over the summer; resumed, it ticks from the first tick after now (no catch-up of paused time).
    await engines[0]!.schedules.pause('nightly');
    await moveTo(w, Date.UTC(2027, 9, 29, 12));
    await tickAll(w, engines);
    await engines[1]!.schedules.resume('nightly');
    await nights(Date.UTC(2027, 9, 29, 23), 3);

    const expected = [
      '2027-03-27T01:30:00.000Z', // 02:30 CET
      '2027-03-28T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST, the instant the clocks jump
      '2027-03-29T00:30:00.000Z', // 02:30 CEST
      '2027-10-30T00:30:00.000Z', // 02:30 CEST
      '2027-10-31T00:30:00.000Z', // 02:30 happens twice: its first occurrence only (CEST)
      '2027-11-01T01:30:00.000Z', // 02:30 CET
    ];
    assert.deepEqual(
      await runKeys(w, 'sched-record'),
      expected.map((t) => `schedule:nightly:${t}`),
      w.log.join('\n'),
    );
    const { runs } = await w.raw.runs.list({ workflow: 'sched-record', limit: 1000 });
    for (const summary of runs) {
      const run = (await w.raw.runs.get(summary.id))!;
      assert.equal(run.status, 'completed', `${run.idempotencyKey} ended`);
      assert.deepEqual(run.output, { tick: run.idempotencyKey!.slice('schedule:nightly:'.length) }, 'the input computed from the tick');
    }
    const s = await w.raw.schedules.get('nightly');
    assert.equal(s?.lastRunId, runs.find((r) => r.idempotencyKey?.endsWith(expected[5]!))?.id);
    assert.deepEqual(s?.firing, []);
  }),

  conformanceCase("the engines' own loop fires due ticks: two engines, three minutes, three runs", async (env) => {
    const everyMinute = defineSchedule({ name: 'minutely', workflow: recorder, cron: '* * * * *', input: { fixed: true } });
    const w = await engineWorld(env, [recorder], { schedules: [everyMinute] });
    const [store] = await storesFor(env, 2).then((s) => s.slice(1));
    await w.startEngine([recorder], { store: store!, schedules: [everyMinute] });
    const first = (await w.raw.schedules.get('minutely'))!.nextTickAt;
    await w.runUntil('three ticks fired', async () => w.clock.now() > first + 2 * MINUTE + 30_000 && (await runKeys(w, 'sched-record')).length >= 3, {
      maxTimers: 500,
    });
    await w.settle();
    const keys = await runKeys(w, 'sched-record');
    const fired = keys.filter((k) => k <= `schedule:minutely:${iso(first + 2 * MINUTE)}`);
    assert.deepEqual(
      fired,
      [0, 1, 2].map((i) => `schedule:minutely:${iso(first + i * MINUTE)}`),
    );
  }),

  conformanceCase("a schedule created by another process is found by an idle engine's loop and fired", async (env) => {
    const w = await engineWorld(env, [recorder]);
    const [store] = await storesFor(env, 2).then((s) => s.slice(1));
    // The creator runs no workers; the first engine learned of no schedule when it started.
    const creator = await w.startEngine([recorder], { store: store!, noWorkers: true });
    const s = await creator.schedules.create({ name: 'found-later', workflow: 'sched-record', cron: '* * * * *', catchUp: 'none' });
    await w.runUntil('the first tick fired by the idle engine', async () => (await runKeys(w, 'sched-record')).length >= 1, { maxTimers: 200 });
    assert.deepEqual(await runKeys(w, 'sched-record'), [`schedule:found-later:${iso(s.nextTickAt)}`], 'fired on time (catchUp none)');
  }),

  conformanceCase('overlap skip: a tick while the previous run is active is skipped and counted', async (env) => {
    const w = await worldAt(env, Date.UTC(2027, 0, 4, 10, 0, 30), [holder]);
    const s = await w.engine.schedules.create({ name: 'skipper', workflow: 'sched-hold', cron: '* * * * *', overlap: 'skip' });
    const t1 = s.nextTickAt;
    await moveTo(w, t1 + 1_000);
    await w.engine.schedules.tick();
    await moveTo(w, t1 + MINUTE + 1_000);
    await w.engine.schedules.tick();
    await w.settle();
    assert.deepEqual(await runKeys(w, 'sched-hold'), [`schedule:skipper:${iso(t1)}`]);
    const skipped = await w.raw.schedules.get('skipper');
    assert.equal(skipped?.skippedTicks, 1);
    assert.equal(skipped?.lastSkippedTickAt, t1 + MINUTE);
    await w.engine.sendEvent(skipped!.lastRunId!, 'finish', null);
    await w.runToEnd(skipped!.lastRunId!);
    await moveTo(w, t1 + 2 * MINUTE + 1_000);
    await w.engine.schedules.tick();
    assert.deepEqual(await runKeys(w, 'sched-hold'), [`schedule:skipper:${iso(t1)}`, `schedule:skipper:${iso(t1 + 2 * MINUTE)}`]);
  }),

  conformanceCase('overlap buffer-one: one tick is kept while the run is active and starts when it ends; a second is skipped', async (env) => {
    const w = await worldAt(env, Date.UTC(2027, 0, 4, 10, 0, 30), [holder]);
    const s = await w.engine.schedules.create({ name: 'buffered', workflow: 'sched-hold', cron: '* * * * *', overlap: 'buffer-one' });
    const t1 = s.nextTickAt;
    for (let i = 0; i < 3; i += 1) {
      await moveTo(w, t1 + i * MINUTE + 1_000);
      await w.engine.schedules.tick();
    }
    await w.settle();
    const mid = await w.raw.schedules.get('buffered');
    assert.equal(mid?.bufferedTickAt, t1 + MINUTE);
    assert.equal(mid?.skippedTicks, 1);
    assert.deepEqual(await runKeys(w, 'sched-hold'), [`schedule:buffered:${iso(t1)}`]);
    await w.engine.sendEvent(mid!.lastRunId!, 'finish', null);
    await w.runToEnd(mid!.lastRunId!);
    await w.engine.schedules.tick();
    await w.settle();
    assert.deepEqual(await runKeys(w, 'sched-hold'), [`schedule:buffered:${iso(t1)}`, `schedule:buffered:${iso(t1 + MINUTE)}`]);
    assert.equal((await w.raw.schedules.get('buffered'))?.bufferedTickAt, null);
  }),

  conformanceCase('overlap allow: every tick starts a run, active or not', async (env) => {
    const w = await worldAt(env, Date.UTC(2027, 0, 4, 10, 0, 30), [holder]);
    const s = await w.engine.schedules.create({ name: 'allower', workflow: 'sched-hold', cron: '* * * * *', overlap: 'allow' });
    for (let i = 0; i < 3; i += 1) {
      await moveTo(w, s.nextTickAt + i * MINUTE + 1_000);
      await w.engine.schedules.tick();
    }
    assert.deepEqual(
      await runKeys(w, 'sched-hold'),
      [0, 1, 2].map((i) => `schedule:allower:${iso(s.nextTickAt + i * MINUTE)}`),
    );
  }),

  conformanceCase('catch-up after a downtime: none starts nothing, latest the latest tick, all the latest catchUpLimit', async (env) => {
    const w = await worldAt(env, Date.UTC(2027, 0, 4, 10, 30), [recorder]);
    const make = (name: string, catchUp: 'none' | 'latest' | 'all') =>
      w.engine.schedules.create({ name, workflow: 'sched-record', cron: '0 * * * *', catchUp, catchUpLimit: 3, overlap: 'allow' });
    const first = (await make('cu-none', 'none')).nextTickAt;
    await make('cu-latest', 'latest');
    await make('cu-all', 'all');
    // Down from before the first tick until 10 minutes after the sixth.
    await moveTo(w, first + 5 * HOUR + 10 * MINUTE);
    await w.engine.schedules.tick();
    await w.settle();
    const keys = await runKeys(w, 'sched-record');
    assert.deepEqual(
      keys.filter((k) => k.startsWith('schedule:cu-none:')),
      [],
    );
    assert.deepEqual(
      keys.filter((k) => k.startsWith('schedule:cu-latest:')),
      [`schedule:cu-latest:${iso(first + 5 * HOUR)}`],
    );
    assert.deepEqual(
      keys.filter((k) => k.startsWith('schedule:cu-all:')),
      [3, 4, 5].map((h) => `schedule:cu-all:${iso(first + h * HOUR)}`),
    );
    const after = await Promise.all(['cu-none', 'cu-latest', 'cu-all'].map((n) => w.raw.schedules.get(n)));
    assert.deepEqual(
      after.map((s) => s?.skippedTicks),
      [6, 5, 3],
    );
    assert.deepEqual(
      after.map((s) => s?.nextTickAt),
      [first + 6 * HOUR, first + 6 * HOUR, first + 6 * HOUR],
    );
    // Back on time: `none` fires a tick noticed within a minute.
    await moveTo(w, first + 6 * HOUR + 5_000);
    await w.engine.schedules.tick();
    assert.ok((await runKeys(w, 'sched-record')).includes(`schedule:cu-none:${iso(first + 6 * HOUR)}`));
  }),

  conformanceCase('pause, resume, trigger, list, get and delete at run time', async (env) => {
    const w = await worldAt(env, Date.UTC(2027, 0, 4, 10, 0, 30), [recorder]);
    const created = await w.engine.schedules.create({ name: 'ops', workflow: recorder, cron: '*/5 * * * *', timezone: 'America/New_York', input: { n: 1 } });
    assert.equal(created.source, 'api');
    assert.equal(created.paused, false);
    await rejectsWithCode(w.engine.schedules.create({ name: 'ops', workflow: recorder, cron: '* * * * *' }), 'SCHEDULE_EXISTS');
    const paused = await w.engine.schedules.pause('ops');
    assert.equal(paused.paused, true);
    assert.equal(paused.dueAt, null);
    await moveTo(w, created.nextTickAt + 1_000);
    assert.equal(await w.engine.schedules.tick(), 0, 'a paused schedule does not tick');
    const { runId, key } = await w.engine.schedules.trigger('ops');
    assert.ok(runId !== undefined && key.startsWith('schedule:ops:trigger:'));
    assert.deepEqual((await w.runToEnd(runId!)).output, { n: 1 });
    assert.equal((await w.raw.schedules.get('ops'))?.lastRunId, runId);
    const resumed = await w.engine.schedules.resume('ops');
    assert.equal(resumed.paused, false);
    assert.ok(resumed.nextTickAt > w.clock.now(), 'resumed from the next tick after now');
    await w.engine.schedules.create({ name: 'another', workflow: recorder, cron: '0 0 1 1 *' });
    assert.deepEqual((await w.engine.schedules.list()).map((s) => s.name).sort(), ['another', 'ops']);
    assert.equal((await w.engine.schedules.list({ limit: 1 })).length, 1);
    // An engine without the workflow (a CLI) records the firing; an engine with it starts the run.
    const thin = await w.startEngine([], { noWorkers: true });
    const recorded = await thin.schedules.trigger('ops');
    assert.equal(recorded.runId, undefined);
    await w.engine.schedules.tick();
    await w.settle();
    assert.equal((await w.raw.runs.findByIdempotencyKey('sched-record', recorded.key))?.status, 'completed');
    assert.equal(await w.engine.schedules.delete('ops'), true);
    assert.equal(await w.engine.schedules.delete('ops'), false);
    assert.equal(await w.engine.schedules.get('ops'), undefined);
    assert.equal((await w.raw.runs.get(runId))?.status, 'completed', 'deleting a schedule keeps its runs');
    await rejectsWithCode(w.engine.schedules.pause('ops'), 'SCHEDULE_NOT_FOUND');
    await rejectsWithCode(w.engine.schedules.trigger('ops'), 'SCHEDULE_NOT_FOUND');
  }),

  conformanceCase('bad input is INVALID_INPUT and writes nothing', async (env) => {
    const w = await worldAt(env, Date.UTC(2027, 0, 4, 10), [recorder]);
    const ok = { name: 'bad', workflow: 'sched-record', cron: '* * * * *' };
    const bad: [string, Record<string, unknown>][] = [
      ['an unparseable cron', { ...ok, cron: 'every tuesday' }],
      ['a cron with a field out of range', { ...ok, cron: '61 * * * *' }],
      ['an unknown zone', { ...ok, timezone: 'Mars/Olympus_Mons' }],
      ['an unknown workflow', { ...ok, workflow: 'no-such-workflow' }],
      ['a bad overlap', { ...ok, overlap: 'sometimes' }],
      ['a bad catch-up', { ...ok, catchUp: 'most' }],
      ['a bad catchUpLimit', { ...ok, catchUp: 'all', catchUpLimit: 0 }],
      ['a function input at run time', { ...ok, input: () => 1 }],
      ['a non-JSON input', { ...ok, input: { n: 1n } }],
      ['an unknown option', { ...ok, every: '1h' }],
      ['an empty name', { ...ok, name: '' }],
      ['a name with NUL', { ...ok, name: 'a\u0000b' }],
    ];
    for (const [what, options] of bad) await rejectsWithCode(w.engine.schedules.create(options as never), 'INVALID_INPUT', what);
    for (const call of [
      () => w.engine.schedules.pause(42 as never),
      () => w.engine.schedules.get({ $gt: '' } as never),
      () => w.engine.schedules.list({ limit: 0 }),
    ]) {
      await rejectsWithCode(call(), 'INVALID_INPUT');
    }
    assert.deepEqual(await w.raw.schedules.list({ limit: 10 }), [], 'nothing written');
    assert.throws(() => defineSchedule({ name: 'x', workflow: 'w', cron: '* * *' }), { code: 'INVALID_INPUT' });
  }),

  conformanceCase('hostile schedule names are kept byte for byte and each gets its own runs', async (env) => {
    const w = await worldAt(env, Date.UTC(2027, 0, 4, 10, 0, 30), [recorder]);
    const names = ["o'brien", 'a:b:2027-01-04T10:01:00.000Z', '%_*?', '{"$gt":""}', 'Zürich ☃ 𝄞', ' lead', 'x'.repeat(200), 'DROP TABLE cairn_schedules;--'];
    let next = 0;
    for (const name of names) next = (await w.engine.schedules.create({ name, workflow: recorder, cron: '* * * * *', input: name })).nextTickAt;
    await moveTo(w, next + 1_000);
    await w.engine.schedules.tick();
    await w.settle();
    for (const name of names) {
      const s = await w.engine.schedules.get(name);
      assert.equal(s?.name, name);
      const run = await w.raw.runs.get(s!.lastRunId!);
      assert.equal(run?.idempotencyKey, `schedule:${name}:${iso(next)}`);
      assert.equal(run?.output, name);
    }
    const listed: string[] = [];
    for (
      let page = await w.engine.schedules.list({ limit: 3 });
      page.length > 0;
      page = await w.engine.schedules.list({ limit: 3, after: page[page.length - 1]!.name })
    ) {
      listed.push(...page.map((s) => s.name));
    }
    assert.deepEqual([...listed].sort(), [...names].sort(), 'paging by name lists each once');
    assert.equal((await runKeys(w, 'sched-record')).length, names.length);
  }),

  conformanceCase('store: of concurrent updates from one revision exactly one lands; findDue skips paused and not-yet-due schedules', async (env) => {
    const w = await worldAt(env, Date.UTC(2027, 0, 4, 10, 0, 30), [recorder]);
    const stores = await storesFor(env, 4);
    const s = await w.engine.schedules.create({ name: 'cas', workflow: recorder, cron: '* * * * *' });
    const results = await Promise.all(stores.map((store, i) => store.schedules.update({ ...s, skippedTicks: i + 1 }, s.revision)));
    assert.equal(results.filter((r) => r !== undefined).length, 1);
    const stored = await w.raw.schedules.get('cas');
    assert.equal(stored?.revision, s.revision + 1);
    assert.equal(stored?.skippedTicks, results.find((r) => r !== undefined)?.skippedTicks);
    await w.engine.schedules.create({ name: 'later', workflow: recorder, cron: '0 0 1 1 *' });
    await w.engine.schedules.create({ name: 'held', workflow: recorder, cron: '* * * * *', paused: true });
    const due = await w.raw.schedules.findDue(s.nextTickAt, 10);
    assert.deepEqual(
      due.map((d) => d.name),
      ['cas'],
    );
  }),
]);
