import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { checkWorkflowCode, defineWorkflow, type AnyWorkflowDefinition } from '@cairn/core';
import { checkRuns, exportRun, type Verdict, type WorkflowStore } from '@cairn/core/backend';
import { replayHistory } from '@cairn/core/testing';
import { sql } from 'kysely';
import type { BackendInstance, OpenedStore } from '../backends/types.js';
import type { AnyDb } from '../backends/sql-drivers.js';
import { diff } from '../instrument/round-trips.js';
import { nowMs } from '../stats.js';
import { ALL_WORKFLOWS, benchEngine } from './workflows.js';

/** Sizes of the pre-deploy check scenario (`--scenarios=check`). */
export interface CheckScenarioOptions {
  /** In-flight runs checked at the large size; the small size is a tenth of it. */
  runs: number;
  /** Recorded steps per run (then an event wait, which the run is suspended on). */
  steps: number;
  /** Timed repetitions per size and candidate (the median is reported). */
  reps: number;
  /** `checkWorkflowCode`'s `pageSize` and `concurrency`; undefined: core's defaults. */
  pageSize?: number;
  concurrency?: number;
  /** Most runs on a store the bench cannot write rows into (memory): those runs go through the engine. */
  engineRuns: number;
  /** Replays of one history, timed alone (no store), for the CPU share of the replay. */
  replays: number;
}

/** One size: N runs checked against the unchanged build. */
export interface CheckSize {
  runs: number;
  /** Median wall time of `checkWorkflowCode` over every run, and each repetition's. */
  wallMs: number;
  samplesMs: number[];
  runsPerSecond: number;
  /** Recorded steps read and replayed per second (runs/s × recorded step rows per run). */
  stepsPerSecond: number;
  /** CPU (user + system) of the bench process during the median repetition, ms: the replay and the driver. */
  cpuMs: number;
  /** CPU of the database server's processes during it (PostgreSQL), ms. */
  serverCpuMs?: number;
  /** The same listing and reads (`runs.list`, `runs.get`, `steps.load`) with no replay, same page size and concurrency: median wall, the bench process's CPU, the server's. */
  readsOnlyMs: number;
  readsOnlyCpuMs: number;
  readsOnlyServerCpuMs?: number;
  /**
   * Peak RSS and heapUsed above their level just before the check (after a full GC), sampled every
   * 10 ms; the largest over the repetitions. Garbage not yet collected counts (V8 lets the heap grow
   * before it collects); the streamed live heap below does not.
   */
  peakRssGrowthMiB: number;
  peakHeapGrowthMiB: number;
  /** `checkRuns` streamed (verdicts counted, not kept), a full GC every 100 verdicts: the largest live heap above the level before, MiB. */
  streamedLiveHeapMiB: number;
  /** What `checkWorkflowCode`'s report (every verdict) still holds after a full GC, MiB. */
  reportHeapMiB: number;
}

export interface CheckResult {
  /** How the store was filled: one real run cloned with SQL, or every run through the engine. */
  populatedBy: 'sql-clone' | 'engine';
  /** Recorded steps per run (`task` steps; the event wait is one more step row). */
  steps: number;
  /** Step rows per run in the store (the tasks and the event wait). */
  stepRows: number;
  /** `undefined`: core's defaults. */
  pageSize?: number;
  concurrency?: number;
  /** Recording the one real run through the engine, and filling the store up to each size. */
  recordMs: number;
  fillMs: number[];
  /** The small size (N/10) and the large one (N). */
  sizes: CheckSize[];
  /** The large size against a build with one inserted step halfway (every run `diverges` there). */
  diverging: {
    runs: number;
    insertedAt: number;
    wallMs: number;
    samplesMs: number[];
    runsPerSecond: number;
    cpuMs: number;
    serverCpuMs?: number;
    reason: string;
  };
  /** Driver round trips (memory: store calls) per checked run, by store method, at the small size. */
  roundTripsPerRun: number;
  roundTripsByMethod: Record<string, number>;
  /** One run's history replayed alone (no store; as many at once as the check does): CPU µs per run, and per step row. */
  replayCpuUsPerRun: number;
  replayCpuUsPerStep: number;
  /** Streamed live heap at N / at N/10: ~1 when memory does not grow with the number of runs. */
  streamedHeapRatio: number;
}

const WORKFLOW = 'bench-check';
const MiB = 2 ** 20;

/**
 * The candidate build, and the build the runs were recorded by: `steps` steps, each returning a
 * small JSON object, then an event wait the run stays suspended on. `insertAt`: a step is inserted
 * before step `insertAt` (a change that makes every recorded run diverge there).
 */
export function checkWorkflow(insertAt?: number) {
  return defineWorkflow(WORKFLOW, async (ctx, n: number) => {
    for (let i = 0; i < n; i++) {
      if (i === insertAt) await ctx.step('inserted', async () => ({ inserted: true }));
      await ctx.step(`s${i}`, async () => ({ index: i, ok: true, note: `output of step ${i}` }));
    }
    await ctx.waitForEvent('go');
    return n;
  });
}

/** `gc()` without `--expose-gc` on the command line (the bench runs under `node --import tsx`). */
export function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** A store holding in-flight runs of `checkWorkflow`, grown on demand, and a peer store to check them through. */
export interface CheckStore {
  /** The store the check reads: its own connection pool, as `cairn check` in another process would have. */
  readonly store: WorkflowStore;
  readonly opened: OpenedStore;
  readonly populatedBy: 'sql-clone' | 'engine';
  /** The run recorded through the engine (the one cloned). */
  readonly source: string;
  /** Step rows per run (the tasks and the event wait). */
  readonly stepRows: number;
  readonly recordMs: number;
  /** Runs in the store now. */
  readonly present: number;
  /** Grows the store to `target` in-flight runs; resolves with the ms it took. */
  fill(target: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * Opens a store on `backend` and records one run of `checkWorkflow(steps)` through the engine
 * (suspended on its event). `fill` then adds runs: on PostgreSQL and SQLite copies of that run
 * made with INSERT … SELECT (`cloneRun`), elsewhere more runs through the engine.
 */
export async function openCheckStore(backend: BackendInstance, steps: number): Promise<CheckStore> {
  const opened = await backend.openStore();
  const { probe } = opened;
  const cloning = opened.sql !== undefined && (opened.sql.dialect === 'postgres' || opened.sql.dialect === 'sqlite');
  const recorded = checkWorkflow();
  const engine = benchEngine(probe.store, { workflows: [...ALL_WORKFLOWS, recorded], concurrency: 64 });
  await engine.start();
  try {
    const record = async (): Promise<string> => {
      const since = nowMs();
      const handle = await engine.startRun(recorded, steps, { mode: 'inline' });
      const w = await probe.execution(handle.id, since);
      if (w.status !== 'waiting') throw new Error(`check: the recorded run ended ${w.status} instead of waiting`);
      return handle.id;
    };
    const r0 = nowMs();
    const source = await record();
    const recordMs = nowMs() - r0;
    const stepRows = (await probe.store.steps.load(source)).length;
    const store = await opened.peer();
    let present = 1;
    return {
      store,
      opened,
      populatedBy: cloning ? 'sql-clone' : 'engine',
      source,
      stepRows,
      recordMs,
      get present() {
        return present;
      },
      async fill(target: number): Promise<number> {
        const f0 = nowMs();
        if (target <= present) return 0;
        if (cloning) {
          await cloneRun(opened.sql!, source, target - present, target);
        } else {
          for (let i = present; i < target; i += 64) await Promise.all(Array.from({ length: Math.min(64, target - i) }, record));
          probe.forget();
        }
        present = target;
        return nowMs() - f0;
      },
      async close() {
        await engine.stop();
        await opened.close();
      },
    };
  } catch (error) {
    await engine.stop();
    await opened.close();
    throw error;
  }
}

/**
 * The pre-deploy check over many in-flight runs. One run of `checkWorkflow` records its steps
 * through the engine and suspends on its event; on a SQL store it is then cloned with
 * INSERT … SELECT (every table holding rows of the run, each clone a fresh id), elsewhere the
 * other runs go through the engine too. `checkWorkflowCode` is timed over N/10 and N runs of the
 * unchanged build (every verdict must be `compatible`), and over N runs of a build with an
 * inserted step (every verdict `diverges`). Memory: peak RSS and heap growth during the timed
 * checks, and the live heap of a streamed `checkRuns` with a full GC every 100 verdicts. Where the
 * time goes: the bench process's CPU, the server's (PostgreSQL), the reads alone, the replay alone.
 */
export async function checkScenario(backend: BackendInstance, options: CheckScenarioOptions): Promise<CheckResult> {
  const gc = collector();
  const cs = await openCheckStore(backend, options.steps);
  const large = cs.populatedBy === 'sql-clone' ? options.runs : Math.min(options.runs, options.engineRuns);
  const small = Math.max(1, Math.round(large / 10));
  const tuning: Tuning = {
    ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  };
  const server = backend.serverCpuMs;
  try {
    const { store, stepRows } = cs;
    const compatible = [checkWorkflow()];
    const insertedAt = Math.floor(options.steps / 2);
    const diverging = [checkWorkflow(insertedAt)];
    const fillMs: number[] = [];
    const sizes: CheckSize[] = [];
    let roundTripsPerRun = 0;
    let roundTripsByMethod: Record<string, number> = {};
    for (const runs of [small, large]) {
      fillMs.push(await cs.fill(runs));
      if (runs === small) {
        // Round trips per checked run, on the counted store (untimed); it warms the pools and the JIT too.
        const before = backend.counter.snapshot();
        const counted = await countVerdicts(cs.opened.probe.store, compatible, tuning, runs, 'compatible');
        const d = diff(backend.counter.snapshot(), before);
        roundTripsPerRun = d.total / counted;
        roundTripsByMethod = Object.fromEntries(Object.entries(d.byMethod).map(([m, n]) => [m, n / counted]));
        await timedCheck(store, compatible, tuning, runs, 'compatible', gc, server);
      }
      const timed: Timed[] = [];
      const reads: Timed[] = [];
      // Interleaved, so that a change in the machine's load falls on both.
      for (let rep = 0; rep < options.reps; rep++) {
        timed.push(await timedCheck(store, compatible, tuning, runs, 'compatible', gc, server));
        reads.push(await readsOnly(store, tuning, runs, server));
      }
      const mid = medianOf(timed);
      const midReads = medianOf(reads);
      const streamed = await streamedLiveHeap(store, compatible, tuning, runs, gc);
      sizes.push({
        runs,
        wallMs: mid.wallMs,
        samplesMs: timed.map((t) => t.wallMs),
        runsPerSecond: (runs * 1000) / mid.wallMs,
        stepsPerSecond: (runs * stepRows * 1000) / mid.wallMs,
        cpuMs: mid.cpuMs,
        ...(mid.serverCpuMs === undefined ? {} : { serverCpuMs: mid.serverCpuMs }),
        readsOnlyMs: midReads.wallMs,
        readsOnlyCpuMs: midReads.cpuMs,
        ...(midReads.serverCpuMs === undefined ? {} : { readsOnlyServerCpuMs: midReads.serverCpuMs }),
        peakRssGrowthMiB: Math.max(...timed.map((t) => t.peakRssGrowth)) / MiB,
        peakHeapGrowthMiB: Math.max(...timed.map((t) => t.peakHeapGrowth)) / MiB,
        streamedLiveHeapMiB: streamed / MiB,
        reportHeapMiB: Math.max(...timed.map((t) => t.reportHeap)) / MiB,
      });
    }

    const diverged: Timed[] = [];
    for (let rep = 0; rep < options.reps; rep++) diverged.push(await timedCheck(store, diverging, tuning, large, 'diverges', gc, server));
    const mid = medianOf(diverged);

    // The replay's own CPU: one history, read once, replayed again and again with no store, as
    // many at once as the check replays.
    const doc = await exportRun(store, cs.source);
    const n = Math.max(1, Math.min(options.replays, large));
    const at = options.concurrency ?? 8;
    const replayBatch = async (count: number) => {
      for (let i = 0; i < count; i += at) {
        for (const v of await Promise.all(Array.from({ length: Math.min(at, count - i) }, () => replayHistory(doc, compatible)))) {
          if (v.verdict !== 'compatible') throw new Error(`check: the history replayed alone is ${v.verdict}`);
        }
      }
    };
    await replayBatch(Math.min(n, 100));
    const c0 = process.cpuUsage();
    await replayBatch(n);
    const cpu = process.cpuUsage(c0);
    const aloneUs = (cpu.user + cpu.system) / n;

    const [s, l] = [sizes[0]!, sizes[sizes.length - 1]!];
    return {
      populatedBy: cs.populatedBy,
      steps: options.steps,
      stepRows,
      ...tuning,
      recordMs: cs.recordMs,
      fillMs,
      sizes,
      diverging: {
        runs: large,
        insertedAt,
        wallMs: mid.wallMs,
        samplesMs: diverged.map((t) => t.wallMs),
        runsPerSecond: (large * 1000) / mid.wallMs,
        cpuMs: mid.cpuMs,
        ...(mid.serverCpuMs === undefined ? {} : { serverCpuMs: mid.serverCpuMs }),
        reason: mid.reason ?? '',
      },
      roundTripsPerRun,
      roundTripsByMethod,
      replayCpuUsPerRun: aloneUs,
      replayCpuUsPerStep: aloneUs / stepRows,
      streamedHeapRatio: s.streamedLiveHeapMiB > 0 ? l.streamedLiveHeapMiB / s.streamedLiveHeapMiB : Number.NaN,
    };
  } finally {
    await cs.close();
  }
}

export type Tuning = { pageSize?: number; concurrency?: number };

interface Timed {
  wallMs: number;
  cpuMs: number;
  serverCpuMs?: number;
  peakRssGrowth: number;
  peakHeapGrowth: number;
  reportHeap: number;
  reason?: string;
}

function medianOf(timed: Timed[]): Timed {
  const sorted = [...timed].sort((a, b) => a.wallMs - b.wallMs);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

function expectCounts(what: string, checked: number, counts: Partial<Record<Verdict, number>>, runs: number, verdict: Verdict): void {
  if (checked !== runs || counts[verdict] !== runs) {
    throw new Error(`check (${what}): ${checked} runs checked, ${JSON.stringify(counts)}; expected ${runs} runs, every one ${verdict}`);
  }
}

/** One timed `checkWorkflowCode`, with RSS and heap sampled every 10 ms and the CPU it took. */
export async function timedCheck(
  store: WorkflowStore,
  workflows: AnyWorkflowDefinition[],
  tuning: Tuning,
  runs: number,
  verdict: Verdict,
  gc: () => void,
  server?: () => number | undefined,
): Promise<Timed> {
  gc();
  const base = process.memoryUsage();
  let rss = base.rss;
  let heap = base.heapUsed;
  const sample = () => {
    const m = process.memoryUsage();
    if (m.rss > rss) rss = m.rss;
    if (m.heapUsed > heap) heap = m.heapUsed;
  };
  const timer = setInterval(sample, 10);
  const s0 = server?.();
  const c0 = process.cpuUsage();
  const t0 = nowMs();
  let report: Awaited<ReturnType<typeof checkWorkflowCode>> | undefined;
  try {
    report = await checkWorkflowCode({ store, workflows, ...tuning });
  } finally {
    clearInterval(timer);
  }
  const wallMs = nowMs() - t0;
  const cpu = process.cpuUsage(c0);
  const s1 = server?.();
  sample();
  expectCounts(verdict, report.checked, report.counts, runs, verdict);
  const reason = report.runs[0]?.divergence ? describeDivergence(report.runs[0].divergence) : undefined;
  gc();
  const reportHeap = process.memoryUsage().heapUsed - base.heapUsed;
  report = undefined;
  return {
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    ...(s0 === undefined || s1 === undefined ? {} : { serverCpuMs: s1 - s0 }),
    peakRssGrowth: rss - base.rss,
    peakHeapGrowth: heap - base.heapUsed,
    reportHeap,
    ...(reason === undefined ? {} : { reason }),
  };
}

function describeDivergence(d: { reason: string; seq: number | null; recorded: { key: string } | null; called: { key: string } | null }): string {
  return `${d.reason} at #${d.seq}: history ${d.recorded?.key ?? 'nothing'}, code ${d.called?.key ?? 'nothing'}`;
}

/** `checkRuns` streamed: verdicts counted, none kept. */
async function countVerdicts(store: WorkflowStore, workflows: AnyWorkflowDefinition[], tuning: Tuning, runs: number, verdict: Verdict): Promise<number> {
  let checked = 0;
  let matching = 0;
  for await (const v of checkRuns({ store, workflows, ...tuning })) {
    checked += 1;
    if (v.verdict === verdict) matching += 1;
  }
  expectCounts('counted', checked, { [verdict]: matching }, runs, verdict);
  return checked;
}

/** `checkRuns` streamed with a full GC every 100 verdicts (every tenth of them when fewer than 1,000): the largest live heap above the level before. */
async function streamedLiveHeap(store: WorkflowStore, workflows: AnyWorkflowDefinition[], tuning: Tuning, runs: number, gc: () => void): Promise<number> {
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  let checked = 0;
  let compatible = 0;
  const every = Math.max(1, Math.min(100, Math.floor(runs / 10)));
  for await (const v of checkRuns({ store, workflows, ...tuning })) {
    checked += 1;
    if (v.verdict === 'compatible') compatible += 1;
    if (checked % every === 0) {
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
  }
  expectCounts('streamed', checked, { compatible }, runs, 'compatible');
  return peak - base;
}

/** What the check reads, without the replay: the same pages, `runs.get` and `steps.load`, the same concurrency. */
export async function readsOnly(store: WorkflowStore, tuning: Tuning, runs: number, server?: () => number | undefined): Promise<Timed> {
  const pageSize = tuning.pageSize ?? 200;
  const concurrency = tuning.concurrency ?? 8;
  const s0 = server?.();
  const c0 = process.cpuUsage();
  const t0 = nowMs();
  let cursor: string | undefined;
  let read = 0;
  do {
    const page = await store.runs.list({
      workflow: WORKFLOW,
      status: ['pending', 'running', 'waiting'],
      limit: pageSize,
      ...(cursor === undefined ? {} : { cursor }),
    });
    cursor = page.nextCursor;
    for (let i = 0; i < page.runs.length; i += concurrency) {
      const batch = page.runs.slice(i, i + concurrency).map((summary) => Promise.all([store.runs.get(summary.id), store.steps.load(summary.id)]));
      for (const [run] of await Promise.all(batch)) if (run !== undefined) read += 1;
    }
  } while (cursor !== undefined);
  const wallMs = nowMs() - t0;
  const cpu = process.cpuUsage(c0);
  const s1 = server?.();
  if (read !== runs) throw new Error(`check (reads only): read ${read} runs, expected ${runs}`);
  return {
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    ...(s0 === undefined || s1 === undefined ? {} : { serverCpuMs: s1 - s0 }),
    peakRssGrowth: 0,
    peakHeapGrowth: 0,
    reportHeap: 0,
  };
}

/** The tables that hold rows of a run, and the column naming the run in each. */
const RUN_TABLES = [
  ['runs', 'id'],
  ['steps', 'run_id'],
  ['attempts', 'run_id'],
  ['state', 'run_id'],
  ['events', 'run_id'],
] as const;

/** Ids per INSERT … SELECT (each statement copies this many runs of every table). */
const CLONE_BATCH = 1000;

async function columnsOf(db: AnyDb, dialect: 'postgres' | 'sqlite', table: string): Promise<string[]> {
  const found =
    dialect === 'postgres'
      ? await sql<{
          name: string;
        }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ${table} order by ordinal_position`.execute(
          db,
        )
      : await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db);
  if (found.rows.length === 0) throw new Error(`check: table ${table} has no columns (not migrated?)`);
  return found.rows.map((r) => r.name);
}

/**
 * `count` copies of run `source`, written with INSERT … SELECT into every table that holds rows of
 * it (every column copied as it is, whatever the schema holds today), each copy with a fresh id
 * and its own steps, attempts, state and events. The copies' created_at / updated_at are the
 * source's minus 1, 2, … ms (distinct, so listing pages are stable); the source has no idempotency
 * key, so neither do they. SQLite's step triggers write the attempts of an inserted finished step
 * themselves: copied attempts that already exist are skipped.
 */
async function cloneRun(tables: NonNullable<OpenedStore['sql']>, source: string, count: number, expected: number): Promise<void> {
  const { db, tablePrefix } = tables;
  const dialect = tables.dialect as 'postgres' | 'sqlite';
  const columns = new Map<string, string[]>();
  for (const [table] of RUN_TABLES) columns.set(table, await columnsOf(db, dialect, `${tablePrefix}${table}`));
  const q = (name: string) => `"${name}"`;
  for (let done = 0; done < count; done += CLONE_BATCH) {
    const ids = Array.from({ length: Math.min(CLONE_BATCH, count - done) }, () => randomUUID());
    const json = JSON.stringify(ids);
    // The new ids, numbered from done + 1 (the copies' time offset).
    const idSource =
      dialect === 'postgres'
        ? sql`(select value as id, ordinality + ${done} as n from json_array_elements_text(${json}::json) with ordinality) as c`
        : sql`(select value as id, key + 1 + ${done} as n from json_each(${json})) as c`;
    await db.transaction().execute(async (trx) => {
      for (const [table, runColumn] of RUN_TABLES) {
        const cols = columns.get(table)!;
        const exprs = cols.map((col) => {
          if (col === runColumn) return 'c.id';
          if (table === 'runs' && (col === 'created_at' || col === 'updated_at')) return `o.${q(col)} - c.n`;
          return `o.${q(col)}`;
        });
        const conflict = table === 'attempts' ? sql` on conflict do nothing` : sql``;
        await sql`insert into ${sql.raw(q(`${tablePrefix}${table}`))} (${sql.raw(cols.map(q).join(', '))}) select ${sql.raw(exprs.join(', '))} from ${sql.raw(q(`${tablePrefix}${table}`))} as o cross join ${idSource} where o.${sql.raw(q(runColumn))} = ${source}${conflict}`.execute(
          trx,
        );
      }
    });
  }
  // Fresh planner statistics, as a table that grew over weeks would have.
  for (const [table] of RUN_TABLES) await sql`analyze ${sql.raw(q(`${tablePrefix}${table}`))}`.execute(db);
  // Every copy is there, waiting, with all its steps.
  const t = (name: string) => sql.raw(q(`${tablePrefix}${name}`));
  const runs = await sql<{ n: number | string }>`select count(*) as n from ${t('runs')} where workflow = ${WORKFLOW} and status = 'waiting'`.execute(db);
  const steps = await sql<{
    n: number | string;
  }>`select count(*) as n from ${t('steps')} s join ${t('runs')} r on r.id = s.run_id where r.workflow = ${WORKFLOW}`.execute(db);
  const perRun = await sql<{ n: number | string }>`select count(*) as n from ${t('steps')} where run_id = ${source}`.execute(db);
  const total = Number(runs.rows[0]!.n);
  if (total !== expected) throw new Error(`check: after cloning, ${total} waiting runs instead of ${expected}`);
  if (Number(steps.rows[0]!.n) !== total * Number(perRun.rows[0]!.n)) {
    throw new Error(`check: after cloning, ${steps.rows[0]!.n} step rows for ${total} runs of ${perRun.rows[0]!.n} steps`);
  }
}
