import assert from 'node:assert/strict';
import {
  CairnError,
  defineWorkflow,
  isTerminalRunStatus,
  type Engine,
  type Json,
  type RunRecord,
  type StepContext,
  type WorkflowContext,
  type WorkflowDefinition,
} from '@cairn/core';
import { FAULT_POINTS, SimulatedCrash, type FaultInjector, type FaultPoint, type FaultSite } from '@cairn/core/testing';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { engineWorld, type EngineWorld } from '../engine/engine-world.js';
import { MotionWatch } from './simulation-motion.js';
import { judgeReplies, judgeStreams, type RunReport } from './simulation-judges.js';
import { newNamespace } from '../run-in-fresh-namespace.js';
import {
  describeProgram,
  eventPayload,
  generateProgram,
  interpret,
  mismatch,
  RETRY_MARGIN,
  Rng,
  stateValue,
  stepValue,
  streamChunk,
  requestPayload,
  requestReply,
  requestsPerName,
  withEmits,
  withRequests,
  type SimNode,
  type SimProgram,
  type Truth,
} from '../fixtures/random-program.js';

/**
 * Seeds per backend when neither `CAIRN_SIM_SEED` nor `CAIRN_SIM_SEEDS` is set: what fits the CI
 * budget (two cores, six backends, about 20 s each). In-process stores (memory, SQLite files) are
 * fast; a server backend pays a round trip per store call, and FerretDB (the local MongoDB) about
 * 15 ms. Every backend runs the same generator from seed 1.
 */
function defaultSeeds(backend: string): number {
  if (backend === 'memory' || backend.includes('sqlite')) return 25;
  if (backend.includes('mongo')) return 5;
  return 12;
}
/** Most crashes one seed's crash run plans (each at the n-th hit of a random fault point). */
const MAX_CRASHES = 3;
/** Timers `runUntil` may fire per run before the run counts as stuck (whatever moved meanwhile). */
const MAX_TIMERS = 1_500;

/** One successful execution of a step body, as the body itself saw it. */
interface BodySuccess {
  path: string;
  runId: string;
  key: string;
  attempt: number;
  /** The engine ("process") generation the body started in. */
  gen: number;
}

/** What the test sees of one run of a program, outside the engine. */
class Tracker {
  /** The generation of the engine running now; each crash starts the next one. */
  gen = 0;
  readonly crashedGens = new Set<number>();
  readonly crashes: FaultSite[] = [];
  /** Body executions per path (successful or not): the first `fails` of them fail. */
  readonly calls = new Map<string, number>();
  readonly successes: BodySuccess[] = [];
  /** Every value workflow code saw at a node path, on every execution (replays and probes too). */
  readonly observed = new Map<string, unknown[]>();

  observe(path: string, value: unknown): void {
    const seen = this.observed.get(path) ?? [];
    seen.push(value === undefined ? null : structuredClone(value));
    this.observed.set(path, seen);
  }
}

/** The input of the simulation workflow: the sequence to run (the root program, or a child's). */
interface SimInput {
  body: SimNode[];
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The workflow that runs a program (and, as a child, a child's part of it). Bodies wait a seeded
 * number of real macrotask turns, so sibling branches finish in another order than they were
 * called, and return a value naming their path.
 */
function simWorkflow(name: string, tracker: Tracker): WorkflowDefinition<SimInput, unknown> {
  const body = (n: Extract<SimNode, { kind: 'step' }>) => async (step: StepContext) => {
    const gen = tracker.gen;
    const call = tracker.calls.get(n.path) ?? 0;
    tracker.calls.set(n.path, call + 1);
    const delay = n.delays[Math.min(call, n.delays.length - 1)] ?? { turns: 0, ms: -1 };
    for (let i = 0; i < delay.turns; i += 1) await macrotask();
    if (delay.ms >= 0) await new Promise((resolve) => setTimeout(resolve, delay.ms));
    if (call < n.fails) throw new Error(`planned failure ${call + 1} of ${n.fails} at ${n.path}`);
    tracker.successes.push({ path: n.path, runId: step.runId, key: step.key, attempt: step.attempt, gen });
    return stepValue(n.path);
  };

  const runSequence = async (ctx: WorkflowContext, nodes: readonly SimNode[]): Promise<unknown[]> => {
    const out: unknown[] = [];
    for (const n of nodes) out.push(await runNode(ctx, n));
    return out;
  };

  const runNode = async (ctx: WorkflowContext, n: SimNode): Promise<unknown> => {
    let value: unknown;
    switch (n.kind) {
      case 'step':
        value = await ctx.step(n.name, body(n), {
          retries: n.fails + RETRY_MARGIN,
          backoff: { type: 'fixed', delay: n.backoffMs },
          ...(n.queued ? { queued: true } : {}),
        });
        break;
      case 'sleep':
        await ctx.sleep(n.name, n.ms);
        value = null;
        break;
      case 'event':
        value = await ctx.waitForEvent(n.event);
        break;
      case 'set':
        await ctx.setState(n.key, stateValue(n.path));
        value = null;
        break;
      case 'get':
        value = (await ctx.state(n.key)) ?? null;
        break;
      case 'now':
        value = await ctx.now();
        break;
      case 'random':
        value = await ctx.random();
        break;
      case 'uuid':
        value = await ctx.uuid();
        break;
      case 'request': {
        const request = await ctx.receiveRequest(n.request);
        await request.reply(requestReply(n.path));
        value = request.payload;
        break;
      }
      case 'emit':
        await ctx.emit(n.stream, streamChunk(n.path));
        value = null;
        break;
      case 'child':
        value = await ctx.child(name, { body: n.body } as unknown as Json, n.name === undefined ? undefined : { name: n.name });
        break;
      case 'all':
        return Promise.all(n.branches.map((branch) => runSequence(ctx, branch)));
    }
    tracker.observe(n.path, value);
    return value;
  };

  const def: WorkflowDefinition<SimInput, unknown> = defineWorkflow(name, (ctx, input: SimInput) => runSequence(ctx, input.body));
  return def;
}

/**
 * Crashes its engine at the `n`-th hit of `point`; from then on the "process" is dead and every
 * later fault site of that engine crashes too, so it records nothing more.
 */
export class CrashAt implements FaultInjector {
  private hits = 0;
  crashed: FaultSite | undefined;
  constructor(
    readonly point: FaultPoint,
    readonly n: number,
  ) {}
  hit(site: FaultSite): void {
    if (this.crashed) throw new SimulatedCrash(site);
    if (site.point !== this.point || ++this.hits < this.n) return;
    this.crashed = site;
    throw new SimulatedCrash(site);
  }
}

/** The crashes planned for a seed: 1..MAX_CRASHES, each at the n-th hit of a random fault point. */
function planCrashes(program: SimProgram, truth: Truth): { point: FaultPoint; n: number }[] {
  const rng = new Rng(program.seed ^ 0x2545f491);
  const reach = Math.max(2, truth.bodies.length);
  return Array.from({ length: rng.int(1, MAX_CRASHES) }, () => ({ point: rng.pick(FAULT_POINTS), n: rng.int(1, reach) }));
}

/** One pause of the pause mode: at the `atLook`-th look, for `looks` looks, of the run or of its whole workflow. */
interface PlannedPause {
  atLook: number;
  looks: number;
  workflow: boolean;
}

/**
 * The pauses planned for a seed: 1 to 3, each starting at a random look (the first ones fall while
 * bodies run and while the run waits), held for 1 to 40 looks (each look fires a timer, so timers
 * fall due while the run is paused), of the run alone or of its whole workflow (its children too).
 */
function planPauses(program: SimProgram, truth: Truth): PlannedPause[] {
  const rng = new Rng(program.seed ^ 0x5bd1e995);
  const reach = Math.max(2, truth.bodies.length);
  let at = 0;
  return Array.from({ length: rng.int(1, 3) }, () => {
    at += rng.int(0, reach);
    return { atLook: at, looks: rng.int(1, 40), workflow: rng.int(0, 3) === 0 };
  });
}

/**
 * Stops a dead engine at once; its abandoned work may still be winding down on the clock. After a
 * crash (`crashed`), the clock moves in steps of 100 ms (10 s at most) while it stops, never timer
 * by timer: a jump to the next timer would let the dead process's delayed jobs fire (a claim a
 * lease long) and could reach an hour-long backstop before the next process is even started, time
 * the liveness bound would wrongly charge to the engine (the stop of a store with signals waits for
 * real I/O: unlistening, announcing the leave).
 */
export async function stopDead(w: EngineWorld, engine: Engine, crashed = false): Promise<void> {
  let done = false;
  const stopping = engine.stop({ graceMs: 0 }).finally(() => (done = true));
  for (let i = 0; i < (crashed ? 100 : 50) && !done; i += 1) {
    await w.settle();
    if (done) break;
    if (crashed) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await w.clock.advance(100);
    } else await w.clock.advanceToNextTimer();
  }
  if (done) await stopping;
}

/** How many times the program waits for each event name (every node runs exactly once). */
function waitsPerEvent(nodes: readonly SimNode[], into = new Map<string, number>()): Map<string, number> {
  for (const n of nodes) {
    if (n.kind === 'event') into.set(n.event, (into.get(n.event) ?? 0) + 1);
    else if (n.kind === 'child') waitsPerEvent(n.body, into);
    else if (n.kind === 'all') for (const b of n.branches) waitsPerEvent(b, into);
  }
  return into;
}

/**
 * Runs `program` to its end in a fresh world, with the planned crashes (none: uninterrupted), and
 * judges it against `truth`. Exported for shrinking a failing program by hand.
 */
export async function runProgram(env: CaseEnv, program: SimProgram, truth: Truth, mode: SimMode): Promise<RunReport> {
  const tracker = new Tracker();
  const def = simWorkflow(`sim-${program.seed}-${mode}`, tracker);
  const plan = mode === 'crash' ? planCrashes(program, truth) : [];
  const injectorFor = () => {
    const next = plan.shift();
    return next ? new CrashAt(next.point, next.n) : undefined;
  };
  let faults = injectorFor();
  const w = await engineWorld(env, [def], { workerId: workerOf(tracker.gen), ...(faults ? { faults } : {}) });
  let engine = w.engine;
  const report: RunReport = { wrong: [], doubleRun: [], lost: [], stuck: [], crashes: tracker.crashes, log: w.log, looks: 0, pauses: 0, storeCalls: 0, ms: 0 };
  const started = performance.now();
  const handle = await engine.startRun(def, { body: program.body });
  // Events are messages: the k-th wait of a name takes the k-th message, so every wait gets one.
  // Early names get all their messages now; a late one gets a message per wait the run records.
  const sent = new Set<string>();
  const lateSent = new Map<string, number>();
  const waits = waitsPerEvent(program.body);
  for (const [name, when] of Object.entries(program.events)) {
    if (when !== 'early') continue;
    for (let k = 0; k < (waits.get(name) ?? 0); k += 1) await engine.sendEvent(handle.id, name, eventPayload(name));
    sent.add(name);
  }

  // Requests: one per receive the run records, sent then and awaited at the end (each must get
  // exactly one reply, the reply of one receive of its name).
  const requestsWanted = requestsPerName(program.body);
  const requestsSent = new Map<string, number>();
  const replies: { name: string; outcome: Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> }[] = [];

  let run: RunRecord | undefined;
  const motion = new MotionWatch(w.store.calls);
  // The pause mode: pause and resume at the planned looks (a paused-then-resumed run must end
  // exactly as an uninterrupted one).
  const pauses = mode === 'pause' ? planPauses(program, truth) : [];
  let pausedSince: number | undefined;
  const pauseStep = async () => {
    const next = pauses[0];
    if (next === undefined) return;
    if (pausedSince === undefined && report.looks >= next.atLook) {
      if (next.workflow) await engine.pauseWorkflow(def.name, { reason: `seed ${program.seed}` });
      else await ignoreEnded(engine.pause(handle.id, { reason: `seed ${program.seed}` }));
      report.pauses += 1;
      pausedSince = report.looks;
    } else if (pausedSince !== undefined && report.looks - pausedSince >= next.looks) {
      if (next.workflow) await engine.resumeWorkflow(def.name);
      else await ignoreEnded(engine.resume(handle.id));
      pauses.shift();
      pausedSince = undefined;
    }
  };
  try {
    await w.runUntil(
      `simulation seed ${program.seed} (${mode})`,
      async () => {
        report.looks += 1;
        motion.look(w.clock.now());
        if (faults?.crashed) {
          // The process died: stop it, and start another one on the same store.
          tracker.crashes.push(faults.crashed);
          tracker.crashedGens.add(tracker.gen);
          await stopDead(w, engine, true);
          tracker.gen += 1;
          faults = injectorFor();
          engine = await w.startEngine([def], { workerId: workerOf(tracker.gen), ...(faults ? { faults } : {}) });
          return false;
        }
        run = await w.raw.runs.get(handle.id);
        if (run && isTerminalRunStatus(run.status)) return true;
        await pauseStep();
        // A late event gets one message per wait of its name the run has recorded. Counted per
        // name, not per waiting step: waits take messages in their call order, and after a crash a
        // later wait's record can land before an earlier one's, so the message sent "for" one wait
        // may be taken by another (one send per waiting key then starved the last wait).
        const recorded = new Map<string, number>();
        for (const step of await w.raw.steps.load(handle.id)) {
          if (step.kind !== 'event') continue;
          const name = step.name.replace(/^event:/, '');
          recorded.set(name, (recorded.get(name) ?? 0) + 1);
        }
        for (const [request, wanted] of requestsWanted) {
          const receives = recorded.get(`$request:${request}`) ?? 0;
          while ((requestsSent.get(request) ?? 0) < Math.min(receives, wanted)) {
            requestsSent.set(request, (requestsSent.get(request) ?? 0) + 1);
            const outcome = engine.request(handle.id, request, requestPayload(request), { timeout: '30d' }).then(
              (value) => ({ ok: true as const, value }),
              (error: unknown) => ({ ok: false as const, error }),
            );
            replies.push({ name: request, outcome });
          }
        }
        for (const [name, count] of recorded) {
          if (sent.has(name)) continue;
          while ((lateSent.get(name) ?? 0) < Math.min(count, waits.get(name) ?? 0)) {
            lateSent.set(name, (lateSent.get(name) ?? 0) + 1);
            await engine.sendEvent(handle.id, name, eventPayload(name));
          }
        }
        return false;
      },
      { maxTimers: MAX_TIMERS },
    );
  } catch (error) {
    report.stuck.push(`${mode}: ${run ? `${run.status} wakeAt=${run.wakeAt}` : 'no run'}: ${(error as Error).message.split('\n')[0]}`);
  }
  report.stuck.push(...motion.problems.map((problem) => `${mode}: ${problem}`));
  await judgeReplies(w, replies, truth, mode, report);
  await stopDead(w, engine);
  report.storeCalls = w.store.calls.length;
  report.ms = Math.round(performance.now() - started);

  if (run && isTerminalRunStatus(run.status)) {
    report.output = run.output;
    if (run.status !== 'completed') report.wrong.push(`${mode}: run ${run.status}: ${run.error?.code ?? run.error?.name}: ${run.error?.message}`);
    else {
      const diff = mismatch(truth.output, run.output, env.t0);
      if (diff) report.wrong.push(`${mode}: ${diff}`);
    }
  }
  // Workflow code must never see a wrong value, on any execution, even one a crash cut short.
  for (const [path, seen] of tracker.observed) {
    const expected = truth.leaves.get(path);
    const first = JSON.stringify(seen[0]);
    const bad = seen.find(
      (value) => (expected === undefined ? true : mismatch(expected, value, env.t0, path) !== undefined) || JSON.stringify(value) !== first,
    );
    if (bad !== undefined || (expected === undefined && seen.length > 0)) {
      report.wrong.push(`${mode}: code at ${path} saw ${tally(seen)}${expected === undefined ? ' (no such node)' : ` (expected ${JSON.stringify(expected)})`}`);
    }
  }
  await judgeBodies(w, tracker, truth, mode, run?.status === 'completed', report);
  if (run?.status === 'completed') await judgeStreams(w, run.id, truth, mode, report);
  return report;
}

/** The modes a program runs in: uninterrupted, with crashes, with pauses and resumes. */
type SimMode = 'plain' | 'crash' | 'pause';

/** A pause or resume that met the run ended (it can end while a pause is on its way) is no failure. */
async function ignoreEnded(change: Promise<unknown>): Promise<void> {
  try {
    await change;
  } catch (error) {
    if (!CairnError.is(error, 'RUN_CONFLICT')) throw error;
  }
}

/** Values in the order first seen, with how often each was seen: `"v:1" ×1, "v:2" ×5`. */
function tally(values: readonly unknown[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(JSON.stringify(value), (counts.get(JSON.stringify(value)) ?? 0) + 1);
  return [...counts].map(([value, n]) => `${value} ×${n}`).join(', ');
}

/** The worker id of the engine ("process") of generation `gen`: attempts record who ran them. */
function workerOf(gen: number): string {
  return `sim-gen-${gen}`;
}

/**
 * Every body must have succeeded exactly once. A success counts once it is recorded (its attempt
 * is in the run's history as succeeded, run by its engine); a success never recorded is allowed
 * only in an engine that crashed (the crash fell between that body and its record, or cut a
 * sibling's record short). The engine is part of the identity: an inline step is recorded once,
 * finished, so an attempt that crashed before its record leaves none, and the next engine's
 * attempt has the same number.
 */
async function judgeBodies(w: EngineWorld, tracker: Tracker, truth: Truth, mode: string, completed: boolean, report: RunReport): Promise<void> {
  const recordedAttempts = new Set<string>();
  for (const runId of new Set(tracker.successes.map((s) => s.runId))) {
    for (const attempt of await w.raw.history.list(runId)) {
      if (attempt.status === 'succeeded') recordedAttempts.add(`${runId}|${attempt.stepKey}|${attempt.attempt}|${attempt.worker}`);
    }
  }
  const isRecorded = (s: BodySuccess) => recordedAttempts.has(`${s.runId}|${s.key}|${s.attempt}|${workerOf(s.gen)}`);
  for (const path of truth.bodies) {
    const successes = tracker.successes.filter((s) => s.path === path);
    const recorded = successes.filter(isRecorded);
    const unexcused = successes.filter((s) => !isRecorded(s) && !tracker.crashedGens.has(s.gen));
    const where = successes.map((s) => `${s.key} attempt ${s.attempt} engine ${s.gen}${isRecorded(s) ? '' : ' (unrecorded)'}`).join('; ');
    if (recorded.length + unexcused.length > 1) report.doubleRun.push(`${mode}: body ${path} succeeded ${successes.length} times: ${where}`);
    if (completed && recorded.length === 0)
      report.lost.push(`${mode}: body ${path} never recorded a success${successes.length ? `: ${where}` : ' (never ran)'}`);
  }
}

/**
 * Runs `body` on a store of its own, in a fresh namespace, destroyed afterwards: every run starts
 * on an empty store (a server backend's queries do not slow down as seeds pile up, and a run left
 * stuck cannot disturb the next seed).
 */
async function withFreshStore<T>(env: CaseEnv, body: (env: CaseEnv) => Promise<T>): Promise<T> {
  const namespace = newNamespace();
  const store = await env.harness.createStore(namespace);
  try {
    return await body({ ...env, store, namespace });
  } finally {
    await (env.harness.destroyStore ? env.harness.destroyStore(store, namespace) : store.close());
  }
}

/** The seeds to run: `CAIRN_SIM_SEED=N` (that one, verbose), `CAIRN_SIM_SEEDS=N` (1..N), or the backend's default. */
function seedsFor(backend: string): { seeds: number[]; verbose: boolean } {
  const one = process.env.CAIRN_SIM_SEED;
  if (one !== undefined && one.trim() !== '') {
    const seed = Number(one);
    assert.ok(Number.isSafeInteger(seed) && seed >= 0, `CAIRN_SIM_SEED must be a non-negative integer, got ${JSON.stringify(one)}`);
    return { seeds: [seed], verbose: true };
  }
  const many = process.env.CAIRN_SIM_SEEDS;
  const count = many !== undefined && many.trim() !== '' ? Number(many) : defaultSeeds(backend);
  assert.ok(Number.isSafeInteger(count) && count >= 1, `CAIRN_SIM_SEEDS must be a positive integer, got ${JSON.stringify(many)}`);
  return { seeds: Array.from({ length: count }, (_, i) => i + 1), verbose: false };
}

const show = (site: FaultSite) => `${site.point}${site.stepKey === undefined ? '' : `(${site.stepKey})`}`;

async function simulate(env: CaseEnv): Promise<void> {
  const { seeds, verbose } = seedsFor(env.harness.name);
  const counts = { wrong: 0, doubleRun: 0, lost: 0, stuck: 0 };
  let crashes = 0;
  let pausesMade = 0;
  const failures: string[] = [];
  for (const seed of seeds) {
    // Streams as program nodes where the store has them (the program is otherwise unchanged).
    // Requests too (they keep their replies in streams).
    const program = env.store.streams === undefined ? generateProgram(seed) : withRequests(withEmits(generateProgram(seed)));
    const truth = interpret(program);
    if (verbose)
      console.log(`# simulation seed ${seed}: ${describeProgram(program)}\n# program: ${JSON.stringify(program)}\n# expected: ${JSON.stringify(truth.output)}`);
    const reports: RunReport[] = [];
    // A store without pause and resume runs the first two modes (its pause cases are skipped too).
    const modes: SimMode[] = env.store.pauses === undefined ? ['plain', 'crash'] : ['plain', 'crash', 'pause'];
    for (const mode of modes) {
      try {
        reports.push(await withFreshStore(env, (fresh) => runProgram(fresh, program, truth, mode)));
      } catch (error) {
        reports.push({
          wrong: [`${mode}: the test itself threw: ${(error as Error).stack ?? String(error)}`],
          doubleRun: [],
          lost: [],
          stuck: [],
          crashes: [],
          log: [],
          looks: 0,
          pauses: 0,
          storeCalls: 0,
          ms: 0,
        });
      }
    }
    const problems = {
      wrong: reports.flatMap((r) => r.wrong),
      doubleRun: reports.flatMap((r) => r.doubleRun),
      lost: reports.flatMap((r) => r.lost),
      stuck: reports.flatMap((r) => r.stuck),
    };
    crashes += reports.reduce((sum, r) => sum + r.crashes.length, 0);
    pausesMade += reports.reduce((sum, r) => sum + r.pauses, 0);
    for (const key of Object.keys(counts) as (keyof typeof counts)[]) if (problems[key].length > 0) counts[key] += 1;
    const crashText = reports[1]?.crashes.map(show).join(', ') || 'none fired';
    const lines = [...problems.wrong, ...problems.doubleRun, ...problems.lost, ...problems.stuck];
    if (lines.length > 0) {
      failures.push(
        `seed ${seed}: ${describeProgram(program)}\n    crashes: ${crashText}\n    ${lines.slice(0, 6).join('\n    ')}${lines.length > 6 ? `\n    ... ${lines.length - 6} more` : ''}`,
      );
    }
    if (verbose) {
      console.log(`# crashes: ${crashText}`);
      for (const [i, report] of reports.entries())
        console.log(
          `# ${modes[i]} (${report.ms} ms, ${report.looks} looks, ${report.pauses} pauses, ${report.storeCalls} store calls): output ${JSON.stringify(report.output)}`,
        );
      for (const line of lines) console.log(`# ${line}`);
      if (lines.length > 0) for (const report of reports) for (const entry of report.log) console.log(`#   ${entry}`);
    }
  }
  const summary = `simulation: seeds=${seeds.length} wrong=${counts.wrong} doubleRun=${counts.doubleRun} lost=${counts.lost} stuck=${counts.stuck}`;
  console.log(`# ${summary} (${env.harness.name}, ${crashes} crashes fired, ${pausesMade} pauses made)`);
  for (const failure of failures) console.log(`# ${failure.replaceAll('\n', '\n# ')}`);
  if (failures.length > 0) {
    assert.fail(`${summary}\nReplay one with CAIRN_SIM_SEED=<seed>:\n${failures.join('\n')}`);
  }
}

/**
 * Adversarial: seeded random programs (fan-outs of multi-step branches with bodies finishing out
 * of call order, nested fan-outs, sleeps, events, state, now/random/uuid, children, retries, queued
 * steps), each run uninterrupted, with crashes at random fault points, and (on stores with pause)
 * paused and resumed at random points, the run alone or its whole workflow; every output must be
 * the interpreter's, and every step body must have succeeded exactly once.
 */
export const simulationGroup: CaseGroup = caseGroup('adversarial.simulation', 'adversarial: seeded simulation of random programs', [
  conformanceCase("random programs, uninterrupted, crashed and paused: the interpreter's output, every body once, nothing stuck", simulate),
]);
