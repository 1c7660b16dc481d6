import pg from 'pg';
import type { BackendInstance } from '../backends/types.js';
import { median, nowMs, repeat } from '../stats.js';
import { benchEngine, stepsWorkflow } from './workflows.js';

export interface FloorResult {
  server: string;
  steps: number;
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
}

/** How many transaction ids the server has assigned so far (read without assigning one). */
export async function xidCounter(client: pg.Client | pg.Pool): Promise<number> {
  const res = await client.query<{ x: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS x');
  return Number(res.rows[0]!.x);
}

/**
 * The physical floor on the same PostgreSQL: one autocommit INSERT per "step" with plain `pg`, the
 * least a durable step can cost (one WAL flush). Rows look like a step record (run id, key, JSON).
 * Each repetition runs the floor loop and then Cairn's run of as many steps, so both see the same
 * disk and CPU conditions; the ratio is of the medians.
 */
export async function pgFloor(backend: BackendInstance, url: string, server: string, options: { steps: number; warmup: number; reps: number; inFlight: number }): Promise<FloorResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // The concurrent floor: one connection per INSERT loop, as each of Cairn's runs gets its own.
  const pool = new pg.Pool({ connectionString: url, max: options.inFlight });
  const opened = await backend.openStore();
  const engine = benchEngine(opened.probe.store, { startMode: 'inline' });
  await engine.start({ workers: false });
  try {
    await client.query('CREATE TABLE IF NOT EXISTS bench_floor (run_id text NOT NULL, key text NOT NULL, output jsonb, created_at bigint NOT NULL, PRIMARY KEY (run_id, key))');
    let loop = 0;
    const samples = await repeat(options.warmup, options.reps, async () => {
      const runId = `floor-${process.pid}-${++loop}`;
      const x0 = await xidCounter(client);
      const t0 = nowMs();
      for (let i = 0; i < options.steps; i++) {
        await client.query('INSERT INTO bench_floor (run_id, key, output, created_at) VALUES ($1, $2, $3, $4)', [runId, `s${i}`, 'null', Date.now()]);
      }
      const floorMs = nowMs() - t0;
      const x1 = await xidCounter(client);
      const t1 = nowMs();
      const handle = await engine.startRun(stepsWorkflow, options.steps, { mode: 'inline' });
      await handle.result();
      const cairnMs = nowMs() - t1;
      const x2 = await xidCounter(client);
      return { floorUs: (floorMs * 1000) / options.steps, floorTx: (x1 - x0) / options.steps, cairnUs: (cairnMs * 1000) / options.steps, cairnTx: (x2 - x1) / options.steps };
    });
    // The same, with `inFlight` loops (floor) and `inFlight` runs (Cairn) at once, alternating.
    const n = options.inFlight;
    const concurrent = await repeat(options.warmup, options.reps, async () => {
      const base = `floor8-${process.pid}-${++loop}`;
      const t0 = nowMs();
      await Promise.all(
        Array.from({ length: n }, async (_, j) => {
          for (let i = 0; i < options.steps; i++) {
            await pool.query('INSERT INTO bench_floor (run_id, key, output, created_at) VALUES ($1, $2, $3, $4)', [`${base}-${j}`, `s${i}`, 'null', Date.now()]);
          }
        }),
      );
      const floorMs = nowMs() - t0;
      const t1 = nowMs();
      const handles = await Promise.all(Array.from({ length: n }, () => engine.startRun(stepsWorkflow, options.steps, { mode: 'inline' })));
      await Promise.all(handles.map((h) => h.result()));
      const cairnMs = nowMs() - t1;
      const per = n * options.steps;
      return { floorUs: (floorMs * 1000) / per, cairnUs: (cairnMs * 1000) / per };
    });
    await client.query('DROP TABLE bench_floor');
    const usPerInsert = median(samples.map((s) => s.floorUs));
    const cairnUsPerStep = median(samples.map((s) => s.cairnUs));
    const usPerInsertInFlight = median(concurrent.map((s) => s.floorUs));
    const cairnUsPerStepInFlight = median(concurrent.map((s) => s.cairnUs));
    return {
      inFlight: n,
      usPerInsertInFlight,
      cairnUsPerStepInFlight,
      ratioInFlight: cairnUsPerStepInFlight / usPerInsertInFlight,
      server,
      steps: options.steps,
      usPerInsert,
      writeTransactionsPerInsert: median(samples.map((s) => s.floorTx)),
      cairnUsPerStep,
      ratio: cairnUsPerStep / usPerInsert,
      cairnWriteTransactionsPerRunStep: median(samples.map((s) => s.cairnTx)),
    };
  } finally {
    await engine.stop();
    await opened.close();
    await client.end();
    await pool.end();
  }
}
