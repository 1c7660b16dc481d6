import pg from 'pg';
import { createKyselyStore } from '@cairn/kysely';
import { postgresDb } from '../backends/sql-drivers.js';
import type { BackendInstance } from '../backends/types.js';
import { median, nowMs, repeat } from '../stats.js';
import { benchEngine, inlineRun } from './workflows.js';

export interface FloorResult {
  server: string;
  steps: number;
  /** Steps each side ran, unmeasured, before the measured repetitions (`FloorOptions.warmUpSteps`). */
  warmUpSteps?: number;
  /** Median time of one autocommit INSERT in a loop of `steps` (each one durably committed). */
  usPerInsert: number;
  /** Write transactions per INSERT (transaction ids assigned; 1 by construction, measured as a check). */
  writeTransactionsPerInsert: number;
  /** Cairn's `steps`-step inline run (startRun + result), per step, measured alternately with the floor. */
  cairnUsPerStep: number;
  ratio: number;
  /** Write transactions per step of the Cairn run (whole run / steps, so including create, claim and completion). */
  cairnWriteTransactionsPerRunStep: number;
  /** How many runs (and floor INSERT loops, each on its own connection) were in flight at once. */
  inFlight: number;
  /** Median wall time per step with `inFlight` INSERT loops at once: elapsed / (loops × steps). */
  usPerInsertInFlight: number;
  /** Median wall time per step with `inFlight` Cairn runs at once: elapsed / (runs × steps). */
  cairnUsPerStepInFlight: number;
  ratioInFlight: number;
  /** The same Cairn runs over a store with `preparedStatements: true` (named statements), alternating with the others. */
  prepared: { cairnUsPerStep: number; ratio: number; cairnUsPerStepInFlight: number; ratioInFlight: number };
  /** Client CPU (this process, user + system) per step: the floor's INSERT loop, Cairn's run, Cairn's run with prepared statements. */
  cpuUsPerStep: { floor: number; cairn: number; prepared: number };
  /** Each level of runs in flight (`FloorOptions.inFlightSeries`), group commit on and off side by side. */
  series?: FloorInFlight[];
}

/** One level of runs in flight: the floor's INSERT loops and Cairn's runs, alternating repetition by repetition. */
export interface FloorInFlight {
  inFlight: number;
  /** The floor: `inFlight` INSERT loops at once, one connection each; wall time per step. */
  floorUs: number;
  /** Cairn, unnamed statements, group commit on (`createKyselyStore`'s defaults). */
  cairnUs: number;
  /** Cairn, named statements, group commit on (`openPostgresStore`'s defaults). */
  preparedUs: number;
  /** Cairn, named statements, `groupCommit: false` (every step write its own statement, as before decision 60). */
  ungroupedUs: number;
  /**
   * Write transactions (commits) per step write: transaction ids the server assigned while
   * `inFlight` runs of `steps` steps ran, less those of `inFlight` one-step runs (the runs' own
   * create, claim and completion), per step beyond the first. Named statements, group commit on / off.
   */
  commitsPerStep: { prepared: number; ungrouped: number };
}

export interface FloorOptions {
  /** Steps per run, and INSERTs per floor loop. */
  steps: number;
  /**
   * Steps each side runs before anything is measured (the floor's INSERT loop, Cairn's runs on both
   * stores). Why: V8 compiles code with its optimising tiers only after many calls, and a step's
   * path (engine, Kysely, `pg`) is much longer than the floor's loop: measured warm, Cairn's client
   * CPU per step fell from 426 µs in the first 500 steps to 130-190 µs after ~5,000 (floor: 133 →
   * 60-80 µs), which a long-running worker pays once per process.
   */
  warmUpSteps: number;
  warmup: number;
  reps: number;
  inFlight: number;
  /** The levels of runs in flight measured side by side with group commit on and off (`inFlight` first). */
  inFlightSeries: number[];
  /** Repetitions of each level (fewer than the sequential part's: a level of 64 runs of 100 steps is 6,400 steps per variant). */
  seriesReps: { warmup: number; reps: number };
}

const FLOOR_INSERT = 'INSERT INTO bench_floor (run_id, key, output, created_at) VALUES ($1, $2, $3, $4)';

/** The floor: `steps` autocommit INSERTs of step-like rows under `runId`, one after another. */
async function insertLoop(db: pg.Client | pg.Pool, runId: string, steps: number): Promise<void> {
  for (let i = 0; i < steps; i++) await db.query(FLOOR_INSERT, [runId, `s${i}`, 'null', Date.now()]);
}

/** How many transaction ids the server has assigned so far (read without assigning one). */
export async function xidCounter(client: pg.Client | pg.Pool): Promise<number> {
  const res = await client.query<{ x: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS x');
  return Number(res.rows[0]!.x);
}

/**
 * The physical floor on the same PostgreSQL: one autocommit INSERT per "step" with plain `pg`, the
 * least a durable step can cost (one WAL flush). Rows look like a step record (run id, key, JSON).
 * Each repetition runs the floor loop, then Cairn's run of as many steps, then the same run over a
 * store with `preparedStatements: true`, so all see the same disk and CPU conditions; the ratios
 * are of the medians. The client CPU of each (this process) is measured around it too.
 */
export async function pgFloor(backend: BackendInstance, url: string, server: string, options: FloorOptions): Promise<FloorResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // A connection ending (the server stopped at the end of the bench) must not be an uncaught error.
  client.on('error', () => {});
  const opened = await backend.openStore();
  const engine = benchEngine(opened.probe.store, { startMode: 'inline' });
  await engine.start({ workers: false });
  // The same tables through a store that sends its routine calls as named statements.
  const most = Math.max(options.inFlight, ...options.inFlightSeries);
  const preparedDb = await postgresDb(url, undefined, most);
  // And through one that sends every step write alone (group commit off), as before decision 60.
  const ungroupedDb = await postgresDb(url, undefined, most);
  const namespace = opened.spec?.namespace;
  if (namespace === undefined) throw new Error('the PostgreSQL bench store has no namespace');
  const preparedEngine = benchEngine(createKyselyStore({ db: preparedDb, tablePrefix: namespace, preparedStatements: true }), { startMode: 'inline' });
  await preparedEngine.start({ workers: false });
  const ungroupedEngine = benchEngine(createKyselyStore({ db: ungroupedDb, tablePrefix: namespace, preparedStatements: true, groupCommit: false }), {
    startMode: 'inline',
  });
  await ungroupedEngine.start({ workers: false });
  // The concurrent floor: one connection per INSERT loop, as each of Cairn's runs gets its own.
  const seriesPool = new pg.Pool({ connectionString: url, max: most });
  seriesPool.on('error', () => {});
  const cpu = () => {
    const c = process.cpuUsage();
    return c.user + c.system;
  };
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS bench_floor (run_id text NOT NULL, key text NOT NULL, output jsonb, created_at bigint NOT NULL, PRIMARY KEY (run_id, key))',
    );
    let loop = 0;
    const runsAtOnce = (engine: ReturnType<typeof benchEngine>, n: number, steps: number) =>
      Promise.all(Array.from({ length: n }, () => inlineRun(engine, steps)));
    // Commits per step write of `n` runs in flight (see `FloorInFlight.commitsPerStep`).
    const commitsPerStep = async (engine: ReturnType<typeof benchEngine>, n: number) => {
      const x0 = await xidCounter(client);
      await runsAtOnce(engine, n, options.steps);
      const x1 = await xidCounter(client);
      await runsAtOnce(engine, n, 1);
      const x2 = await xidCounter(client);
      return (x1 - x0 - (x2 - x1)) / (n * (options.steps - 1));
    };
    const inFlightLevel = async (n: number): Promise<FloorInFlight> => {
      const timed = async (fn: () => Promise<unknown>) => {
        const t0 = nowMs();
        await fn();
        return ((nowMs() - t0) * 1000) / (n * options.steps);
      };
      const reps = await repeat(options.seriesReps.warmup, options.seriesReps.reps, async () => {
        const base = `floor-n${n}-${process.pid}-${++loop}`;
        return {
          floorUs: await timed(() => Promise.all(Array.from({ length: n }, (_, j) => insertLoop(seriesPool, `${base}-${j}`, options.steps)))),
          cairnUs: await timed(() => runsAtOnce(engine, n, options.steps)),
          preparedUs: await timed(() => runsAtOnce(preparedEngine, n, options.steps)),
          ungroupedUs: await timed(() => runsAtOnce(ungroupedEngine, n, options.steps)),
        };
      });
      const pick = (k: 'floorUs' | 'cairnUs' | 'preparedUs' | 'ungroupedUs') => median(reps.map((r) => r[k]));
      return {
        inFlight: n,
        floorUs: pick('floorUs'),
        cairnUs: pick('cairnUs'),
        preparedUs: pick('preparedUs'),
        ungroupedUs: pick('ungroupedUs'),
        commitsPerStep: { prepared: await commitsPerStep(preparedEngine, n), ungrouped: await commitsPerStep(ungroupedEngine, n) },
      };
    };
    // The code of both sides warmed up first, alike (see `FloorOptions.warmUpSteps`).
    for (let done = 0; done < options.warmUpSteps; done += options.steps) {
      await insertLoop(client, `floor-warm-${process.pid}-${++loop}`, options.steps);
      await inlineRun(engine, options.steps);
      await inlineRun(preparedEngine, options.steps);
      await inlineRun(ungroupedEngine, options.steps);
    }
    const samples = await repeat(options.warmup, options.reps, async () => {
      const runId = `floor-${process.pid}-${++loop}`;
      const x0 = await xidCounter(client);
      const c0 = cpu();
      const t0 = nowMs();
      await insertLoop(client, runId, options.steps);
      const floorMs = nowMs() - t0;
      const floorCpu = cpu() - c0;
      const x1 = await xidCounter(client);
      const c1 = cpu();
      const t1 = nowMs();
      await inlineRun(engine, options.steps);
      const cairnMs = nowMs() - t1;
      const cairnCpu = cpu() - c1;
      const x2 = await xidCounter(client);
      const c2 = cpu();
      const t2 = nowMs();
      await inlineRun(preparedEngine, options.steps);
      const preparedMs = nowMs() - t2;
      const preparedCpu = cpu() - c2;
      const per = (x: number) => x / options.steps;
      return {
        floorUs: per(floorMs * 1000),
        floorTx: per(x1 - x0),
        cairnUs: per(cairnMs * 1000),
        cairnTx: per(x2 - x1),
        preparedUs: per(preparedMs * 1000),
        cpu: { floor: per(floorCpu), cairn: per(cairnCpu), prepared: per(preparedCpu) },
      };
    });
    const series: FloorInFlight[] = [];
    for (const n of [options.inFlight, ...options.inFlightSeries.filter((n) => n !== options.inFlight)]) series.push(await inFlightLevel(n));
    // The first level is the one the earlier fields report (`inFlight`).
    const first = series[0] as FloorInFlight;
    await client.query('DROP TABLE bench_floor');
    const usPerInsert = median(samples.map((s) => s.floorUs));
    const cairnUsPerStep = median(samples.map((s) => s.cairnUs));
    const usPerInsertInFlight = first.floorUs;
    const cairnUsPerStepInFlight = first.cairnUs;
    const preparedUs = median(samples.map((s) => s.preparedUs));
    const preparedInFlight = first.preparedUs;
    return {
      series,
      prepared: {
        cairnUsPerStep: preparedUs,
        ratio: preparedUs / usPerInsert,
        cairnUsPerStepInFlight: preparedInFlight,
        ratioInFlight: preparedInFlight / usPerInsertInFlight,
      },
      cpuUsPerStep: {
        floor: median(samples.map((s) => s.cpu.floor)),
        cairn: median(samples.map((s) => s.cpu.cairn)),
        prepared: median(samples.map((s) => s.cpu.prepared)),
      },
      inFlight: first.inFlight,
      usPerInsertInFlight,
      cairnUsPerStepInFlight,
      ratioInFlight: cairnUsPerStepInFlight / usPerInsertInFlight,
      server,
      steps: options.steps,
      warmUpSteps: options.warmUpSteps,
      usPerInsert,
      writeTransactionsPerInsert: median(samples.map((s) => s.floorTx)),
      cairnUsPerStep,
      ratio: cairnUsPerStep / usPerInsert,
      cairnWriteTransactionsPerRunStep: median(samples.map((s) => s.cairnTx)),
    };
  } finally {
    // Each step of the clean-up runs whatever an earlier one threw: a pool left open would get an
    // error from every idle connection when the server stops.
    for (const close of [
      () => engine.stop(),
      () => preparedEngine.stop(),
      () => ungroupedEngine.stop(),
      () => preparedDb.destroy(),
      () => ungroupedDb.destroy(),
      () => seriesPool.end(),
      () => opened.close(),
      () => client.end(),
    ]) {
      await close().catch(() => {});
    }
  }
}
