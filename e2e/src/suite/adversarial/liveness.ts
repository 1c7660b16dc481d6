import assert from 'node:assert/strict';
import { defineWorkflow, isTerminalRunStatus, NonRetryableError } from '@cairn/core';
import { FAULT_POINTS, SimulatedCrash, type ManualClock, type FaultInjector, type FaultPoint, type FaultSite } from '@cairn/core/testing';
import { conformanceCase, type CaseEnv, type ConformanceCase } from '../case.js';
import { engineWorld, WORLD_RECOVERY_MS, WORLD_TIMINGS } from '../engine/engine-world.js';

/**
 * The liveness bound (docs/semantics.md, "What is guaranteed"): after a crash at any fault point,
 * every run the process left behind is executing again, or finished, within
 * `leaseMs + 2 × recoveryIntervalMs` of the crash. A world's engines: 30 s + 2 × 10 s.
 */
export const LIVENESS_BOUND_MS = WORLD_TIMINGS.leaseMs + 2 * WORLD_RECOVERY_MS;

/** One fault site: the `nth` hit of `point` on the `run`-th run to appear (1: the root), step `stepKey` or run-level. */
interface Site {
  point: FaultPoint;
  run: number;
  stepKey: string | undefined;
  nth: number;
}

const siteName = (s: Site) => `${s.point} of run #${s.run}${s.stepKey === undefined ? '' : ` step ${s.stepKey}`} (hit #${s.nth})`;

/**
 * A process that dies at one site: it throws there and at every site after it (a dead process
 * records nothing more). Runs are numbered in the order they first hit a site; with no target it
 * only records the sites (a dry run).
 */
class DieAtSite implements FaultInjector {
  readonly sites: Site[] = [];
  crashed: { site: FaultSite; at: number } | undefined;
  private readonly runs = new Map<string, number>();
  private readonly seen = new Map<string, number>();
  constructor(
    private readonly clock: () => ManualClock | undefined,
    private readonly target?: Site,
  ) {}
  hit(site: FaultSite): void {
    if (this.crashed) throw new SimulatedCrash(site);
    let run = this.runs.get(site.runId);
    if (run === undefined) this.runs.set(site.runId, (run = this.runs.size + 1));
    const id = `${site.point}|${run}|${site.stepKey ?? ''}`;
    const nth = (this.seen.get(id) ?? 0) + 1;
    this.seen.set(id, nth);
    this.sites.push({ point: site.point, run, stepKey: site.stepKey, nth });
    const t = this.target;
    if (t && t.point === site.point && t.run === run && t.stepKey === site.stepKey && t.nth === nth) {
      this.crashed = { site, at: this.clock()?.now() ?? Number.NaN };
      throw new SimulatedCrash(site);
    }
  }
}

/**
 * Every way a run waits after a crash, with no timer of its own (so the time to its end is the time
 * recovery took): an inline step, a queued step, a child with one step (the issue's minimal case),
 * a failing child taken as a value, and a child that continues as new once.
 */
function livenessWorkflows() {
  const kid = defineWorkflow('live-kid', async (ctx) => ctx.step('k', () => 'kid'));
  const failing = defineWorkflow('live-failing', async (ctx) =>
    ctx.step('boom', () => {
      throw new NonRetryableError('no');
    }),
  );
  const chain = defineWorkflow('live-chain', async (ctx, input: { n: number } | null) => {
    if ((input?.n ?? 0) < 1) return ctx.continueAsNew({ n: 1 });
    return ctx.step('last', () => 'chained');
  });
  const root = defineWorkflow('live-root', async (ctx) => {
    const a = await ctx.step('a', () => 'a');
    const q = await ctx.step('q', () => 'q', { queued: true });
    const c = await ctx.child(kid, null);
    const f = await ctx.childOutcome(failing, null);
    const n = await ctx.child(chain, null);
    return [a, q, c, f.ok ? 'ok' : f.status, n];
  });
  return { root, all: [root, kid, failing, chain] };
}

const EXPECTED = ['a', 'q', 'kid', 'failed', 'chained'];

/**
 * For every site of `point` a clean run meets: a process dies there, another starts at that
 * moment, and the root run must end within the bound of the crash. Sites a crash run does not
 * reach (the interleaving differed) are skipped; at least one must be reached.
 */
async function endsWithinBound(env: CaseEnv, point: FaultPoint): Promise<void> {
  const { root, all } = livenessWorkflows();
  let clock: ManualClock | undefined;
  const probe = new DieAtSite(() => clock);
  const dry = await engineWorld(env, all, { faults: probe });
  clock = dry.clock;
  const dryRun = await dry.runToEnd((await dry.engine.startRun(root, null)).id);
  assert.deepEqual(dryRun.output, EXPECTED);
  await dry.engine.stop();
  const sites = probe.sites.filter((s) => s.point === point);
  assert.ok(sites.length > 0, `the engine never hit fault point ${point}`);

  const late: string[] = [];
  let reached = 0;
  let slowest = 0;
  for (const target of sites) {
    let worldClock: ManualClock | undefined;
    const faults = new DieAtSite(() => worldClock, target);
    const w = await engineWorld(env, all, { faults });
    worldClock = w.clock;
    const handle = await w.engine.startRun(root, null);
    await w.runUntil(`a crash at ${siteName(target)} or the end`, async () => {
      if (faults.crashed) return true;
      const run = await w.raw.runs.get(handle.id);
      return run !== undefined && isTerminalRunStatus(run.status);
    });
    await w.engine.stop();
    if (!faults.crashed) continue;
    reached += 1;
    // Another process starts at the moment of the crash.
    assert.equal(w.clock.now(), faults.crashed.at);
    const survivor = await w.startEngine(all);
    const run = await w.runToEnd(handle.id);
    const where = `after a crash at ${siteName(target)}`;
    assert.equal(run.status, 'completed', `${where}: ${JSON.stringify(run.error)}`);
    assert.deepEqual(run.output, EXPECTED, where);
    const took = w.clock.now() - faults.crashed.at;
    slowest = Math.max(slowest, took);
    if (took > LIVENESS_BOUND_MS) late.push(`${where}: the run ended ${took / 1000} s after it`);
    await survivor.stop();
  }
  assert.ok(reached > 0, `no crash run reached a ${point} site`);
  console.log(
    `# liveness ${point}: ${reached} of ${sites.length} sites crashed, slowest end ${slowest / 1000} s after the crash (bound ${LIVENESS_BOUND_MS / 1000} s, ${env.harness.name})`,
  );
  assert.deepEqual(late, [], `every run ends within ${LIVENESS_BOUND_MS / 1000} s (leaseMs + 2 × recoveryIntervalMs) of the crash`);
}

/**
 * A queued body that runs for minutes is held by its worker's heartbeat (one attempt, never taken
 * for abandoned); when that worker dies mid-body, the next attempt starts within the bound.
 */
async function heldThenReplaced(env: CaseEnv): Promise<void> {
  const started: number[] = [];
  const wf = defineWorkflow('live-held', async (ctx) =>
    ctx.step(
      'long',
      (step) => {
        started.push(step.attempt);
        if (step.attempt > 1) return 'second';
        // The first attempt runs until its worker stops (its signal aborts then).
        return new Promise<string>((_resolve, reject) => {
          if (step.signal.aborted) reject(step.signal.reason);
          else step.signal.addEventListener('abort', () => reject(step.signal.reason), { once: true });
        });
      },
      { queued: true },
    ),
  );
  const w = await engineWorld(env, [wf]);
  const handle = await w.engine.startRun(wf, null);
  await w.runUntil('the first attempt runs', async () => started.length === 1);
  const bodyStart = w.clock.now();
  // Four minutes of a live worker: within queuedStepTimeoutMs (5 min), well past the lease.
  await w.runUntil('four minutes pass', async () => w.clock.now() - bodyStart >= 4 * 60_000);
  assert.deepEqual(started, [1], 'a live worker’s attempt is never taken for abandoned');
  const step = (await w.raw.steps.load(handle.id)).find((s) => s.key === 'long');
  assert.equal(step?.status, 'running');
  assert.ok(step?.wakeAt !== undefined && step.wakeAt > w.clock.now(), 'the heartbeat keeps the attempt held');
  // The process dies: its heartbeat stops with it (a stop with no grace aborts the body's signal).
  const diedAt = w.clock.now();
  await w.engine.stop({ graceMs: 0 });
  await w.startEngine([wf]);
  await w.runUntil('the second attempt starts', async () => started.length === 2);
  const took = w.clock.now() - diedAt;
  assert.ok(took <= LIVENESS_BOUND_MS, `the second attempt started ${took / 1000} s after the worker died (bound ${LIVENESS_BOUND_MS / 1000} s)`);
  const run = await w.runToEnd(handle.id);
  assert.equal(run.output, 'second');
  assert.deepEqual(
    (await w.raw.history.list(handle.id)).map((a) => [a.attempt, a.status]),
    [
      [1, 'abandoned'],
      [2, 'succeeded'],
    ],
  );
}

/** Liveness: per fault point, the run a crash interrupted ends within the bound (no timer of its own). */
export const livenessCases: ConformanceCase[] = [
  ...FAULT_POINTS.map((point) =>
    conformanceCase(`liveness: after a crash at any ${point} site the run ends within leaseMs + 2 × recoveryIntervalMs`, (env) => endsWithinBound(env, point)),
  ),
  conformanceCase(
    'liveness: a queued body is held by its heartbeat for minutes; when its worker dies, the next attempt starts within the bound',
    heldThenReplaced,
  ),
];
