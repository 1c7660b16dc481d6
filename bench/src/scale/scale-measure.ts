import type { RunQuery } from '@cairn/core';
import { uuidv7 } from '@cairn/core/backend';
import { median, nowMs, percentile } from '../stats.js';
import type { ScaleTarget } from './scale-targets.js';
import { measuredSteps, scaleTags } from './scale-workflows.js';

/** One measured operation: medians on the empty and the loaded store, side by side. */
export interface ScaleFigure {
  operation: string;
  /** Median ms on the empty store. */
  empty: number;
  /** Median ms on the loaded store. */
  loaded: number;
  /** loaded / empty. */
  ratio: number;
  /** 95th percentile ms on each store. */
  p95: { empty: number; loaded: number };
  /**
   * Mean CPU per call in ms, this process (user + system) plus the server's where it has one
   * (10 ms ticks, hence a mean): less disturbed than wall time by other work on a shared machine.
   */
  cpu: { empty: number; loaded: number; ratio: number };
  /** Extra information (rows returned, runs deleted per second). */
  note?: string;
}

/** CPU used so far, in ms: this process's (user + system), and the server's (0 when unknown). */
export interface CpuClock {
  own(): number;
  server(): number;
}

/** A CPU clock over this process and, when given, a server's process tree. */
export function cpuClock(server?: () => number | undefined): CpuClock {
  return {
    own: () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1000;
    },
    server: () => server?.() ?? 0,
  };
}

interface Timings {
  wall: [number[], number[]];
  cpu: [number[], number[]];
}

/** How many repetitions, and how many runs each retention pass deletes. */
export interface ScaleSizes {
  reps: number;
  warmup: number;
  inlineSteps: number;
  pruneRuns: number;
  pruneReps: number;
}

const DAY = 24 * 3600_000;

/**
 * Times `fn` on both stores, alternating empty and loaded in every repetition (so drift in the
 * machine's load touches both alike), after `warmup` untimed rounds. `prepare` runs untimed before
 * each call.
 */
async function sideBySide<P>(
  stores: readonly [ScaleTarget, ScaleTarget],
  sizes: { reps: number; warmup: number; cpu: CpuClock },
  fn: (target: ScaleTarget, prepared: P) => Promise<unknown>,
  prepare: (target: ScaleTarget, rep: number) => Promise<P> = async () => undefined as P,
): Promise<Timings> {
  const out: Timings = { wall: [[], []], cpu: [[], []] };
  for (let rep = -sizes.warmup; rep < sizes.reps; rep++) {
    for (const [i, target] of stores.entries()) {
      const prepared = await prepare(target, rep);
      // The server's clock is read outside this process's (its /proc scan costs this process CPU).
      const s0 = sizes.cpu.server();
      const o0 = sizes.cpu.own();
      const t0 = nowMs();
      await fn(target, prepared);
      const ms = nowMs() - t0;
      const o1 = sizes.cpu.own();
      const cpu = o1 - o0 + (sizes.cpu.server() - s0);
      if (rep >= 0) {
        out.wall[i]!.push(ms);
        out.cpu[i]!.push(cpu);
      }
    }
  }
  return out;
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

function figure(operation: string, timings: Timings, note?: string, per = 1): ScaleFigure {
  const e = median(timings.wall[0]) / per;
  const l = median(timings.wall[1]) / per;
  const ce = mean(timings.cpu[0]) / per;
  const cl = mean(timings.cpu[1]) / per;
  const p95 = { empty: percentile(timings.wall[0], 95) / per, loaded: percentile(timings.wall[1], 95) / per };
  return { operation, empty: e, loaded: l, ratio: l / e, p95, cpu: { empty: ce, loaded: cl, ratio: cl / ce }, ...(note === undefined ? {} : { note }) };
}

/**
 * The tag listings (issue 32), on stores whose runs carry `scaleTags`: a selective tag (one
 * customer: 50 runs of a million, 1 of the small store's 2,000), an unselective one (plan `free`,
 * 60 %), each alone and with a status or workflow filter, a status no loaded run has (the filter
 * matches nothing, so a walk of the tag's runs would read them all), and both tags at once.
 */
export function tagQueries(): Array<{ name: string; query: RunQuery }> {
  const customer = scaleTags(1234).customer;
  return [
    { name: `tag customer (selective)`, query: { tags: { customer } } },
    { name: `tag customer + status completed`, query: { tags: { customer }, status: 'completed' } },
    { name: `tag customer + plan (AND)`, query: { tags: { customer, plan: scaleTags(1234).plan } } },
    { name: 'tag plan free (unselective, 60 %)', query: { tags: { plan: 'free' } } },
    { name: 'tag plan free + status failed (4 %)', query: { tags: { plan: 'free' }, status: 'failed' } },
    { name: 'tag plan free + workflow', query: { tags: { plan: 'free' }, workflow: 'scale-w3' } },
    { name: 'tag plan free + workflow + status failed', query: { tags: { plan: 'free' }, workflow: 'scale-w3', status: 'failed' } },
    { name: 'tag plan free + status running (none loaded)', query: { tags: { plan: 'free' }, status: 'running' } },
    { name: 'tag plan enterprise + status failed or cancelled', query: { tags: { plan: 'enterprise' }, status: ['failed', 'cancelled'] } },
  ];
}

/** The `listRuns` first pages measured: no filter, each filter `runs.list` offers, and (where the runs carry tags) `tagQueries`. */
export function listQueries(loadedFrom: number, loadedTo: number, someRunId: string, tags = false): Array<{ name: string; query: RunQuery }> {
  const middle = Math.round((loadedFrom + loadedTo) / 2);
  return [
    ...(tags ? tagQueries() : []),
    { name: 'no filter', query: {} },
    { name: 'status completed', query: { status: 'completed' } },
    { name: 'status failed', query: { status: 'failed' } },
    { name: 'status running (none loaded)', query: { status: 'running' } },
    { name: 'status failed or cancelled', query: { status: ['failed', 'cancelled'] } },
    { name: 'workflow', query: { workflow: 'scale-w3' } },
    { name: 'workflow + status failed', query: { workflow: 'scale-w3', status: 'failed' } },
    { name: 'workflow + status running (none loaded)', query: { workflow: 'scale-w3', status: 'running' } },
    { name: 'created in one day', query: { createdAfter: middle - DAY, createdBefore: middle } },
    { name: 'status completed + created before', query: { status: 'completed', createdBefore: middle } },
    { name: 'workflow + created before', query: { workflow: 'scale-w3', createdBefore: middle } },
    { name: 'parent (children of a run)', query: { parentRunId: someRunId } },
    { name: 'workflow + idempotency key', query: { workflow: 'scale-w3', idempotencyKey: 'no-such-key' } },
  ];
}

/**
 * Every scale figure, side by side on the two stores: an inline step, a claim, a recovery pass,
 * `listRuns` first pages, and a retention pass (which deletes exactly `pruneRuns` runs loaded
 * just before it, older than anything else in the store).
 */
export async function measureScale(
  stores: readonly [ScaleTarget, ScaleTarget],
  sizes: ScaleSizes,
  window: { loadedFrom: number; loadedTo: number; someRunId: string; tags: boolean },
  log: (line: string) => void,
  cpu: CpuClock,
  only?: RegExp,
): Promise<ScaleFigure[]> {
  const out: ScaleFigure[] = [];
  const reps = { reps: sizes.reps, warmup: sizes.warmup, cpu };

  const wanted = (name: string) => only === undefined || only.test(name);
  const n = sizes.inlineSteps;
  if (wanted('inline')) {
    // Where the store reads its file in this process (SQLite), the read calls per step say whether
    // a step's pages come from SQLite's own page cache or from the operating system's.
    const reads: [number, number] = [0, 0];
    const inline = await sideBySide(stores, reps, async (t) => {
      const r0 = t.readCalls?.() ?? 0;
      await (await t.engine.startRun(measuredSteps, n, { mode: 'inline' })).result();
      reads[t.label === 'empty' ? 0 : 1] += (t.readCalls?.() ?? 0) - r0;
    });
    const perStep = (i: 0 | 1) => (reads[i] / ((sizes.reps + sizes.warmup) * n)).toFixed(2);
    const note = stores[0].readCalls === undefined ? undefined : `read calls per step: ${perStep(1)} loaded, ${perStep(0)} small`;
    out.push(figure(`inline step (a ${n}-step inline run, start→result, per step)`, inline, note, n));
    log(`  inline: ${JSON.stringify(out.at(-1))}`);
  }
  if (wanted('claim')) out.push(await claim(stores, reps, log));
  if (wanted('recovery')) {
    const recovery = await sideBySide(stores, reps, (t) => t.engine.recover());
    out.push(figure('recovery pass (engine.recover(), nothing due)', recovery));
    log(`  recovery: ${JSON.stringify(out.at(-1))}`);
  }
  for (const { name, query } of listQueries(window.loadedFrom, window.loadedTo, window.someRunId, window.tags)) {
    if (!wanted(`listRuns ${name}`)) continue;
    let rows = 0;
    const times = await sideBySide(stores, reps, async (t) => {
      const page = await t.engine.listRuns({ ...query, limit: 50 });
      if (t.label === 'loaded') rows = page.runs.length;
    });
    out.push(figure(`listRuns first page: ${name}`, times, `${rows} rows on the loaded store`));
    log(`  list ${name}: ${JSON.stringify(out.at(-1))}`);
  }
  if (wanted('retention')) out.push(await retention(stores, sizes, cpu, log));
  return out;
}

/** A claim of a run just created (the create untimed); the run is finished afterwards, untimed, so the loaded store keeps only finished runs. */
async function claim(
  stores: readonly [ScaleTarget, ScaleTarget],
  reps: { reps: number; warmup: number; cpu: CpuClock },
  log: (line: string) => void,
): Promise<ScaleFigure> {
  const claims = await sideBySide(
    stores,
    reps,
    async (t, id: string) => {
      const run = await t.store.runs.claim(id, 'scale-bench', 60_000, Date.now());
      if (!run) throw new Error(`claim of ${id} failed`);
      await t.store.runs.transition(id, run.fence, { from: ['running'], to: 'completed', output: null }, Date.now());
    },
    async (t) => {
      const id = uuidv7();
      await t.store.runs.create({ id, workflow: 'scale-steps', version: '1', input: 0 }, Date.now());
      return id;
    },
  );
  const result = figure('claim (runs.claim of a pending run; includes finishing it)', claims);
  log(`  claim: ${JSON.stringify(result)}`);
  return result;
}

/** The retention pass, deleting exactly `sizes.pruneRuns` runs each time. */
async function retention(stores: readonly [ScaleTarget, ScaleTarget], sizes: ScaleSizes, cpu: CpuClock, log: (line: string) => void): Promise<ScaleFigure> {
  // Retention: before each pass, `pruneRuns` runs ended 60 days ago are loaded (untimed); the pass
  // (`engine.prune({ before: now - 45 days })`) must delete exactly those, and nothing loaded.
  let next = 10_000_000;
  const deleted: [number[], number[]] = [[], []];
  const prune = await sideBySide(
    stores,
    { reps: sizes.pruneReps, warmup: 1, cpu },
    async (t) => {
      const result = await t.engine.prune({ before: Date.now() - 45 * DAY });
      if (result.deleted !== sizes.pruneRuns) throw new Error(`${t.label}: prune deleted ${result.deleted}, expected ${sizes.pruneRuns}`);
    },
    async (t) => {
      const first = next;
      next += sizes.pruneRuns;
      await t.load({ first, count: sizes.pruneRuns, createdFrom: Date.now() - 60 * DAY, spacingMs: 10 });
    },
  );
  for (const [i, times] of prune.wall.entries()) deleted[i] = times.map((ms) => (sizes.pruneRuns / ms) * 1000);
  const perCpuSecond = (i: 0 | 1) => Math.round((sizes.pruneRuns / mean(prune.cpu[i])) * 1000);
  const result = figure(
    `retention pass (engine.prune deleting ${sizes.pruneRuns} runs)`,
    prune,
    `runs deleted per second: ${Math.round(median(deleted[1]))} loaded, ${Math.round(median(deleted[0]))} small; per CPU-second (client + server): ${perCpuSecond(1)} loaded, ${perCpuSecond(0)} small`,
  );
  log(`  prune: ${JSON.stringify(result)}`);
  return result;
}
