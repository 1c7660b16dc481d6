import pg from 'pg';
import { median, nowMs, repeat } from '../stats.js';

export interface FloorResult {
  server: string;
  steps: number;
  /** Median time of one autocommit INSERT in a loop of `steps` (each one durably committed). */
  usPerInsert: number;
  /** Write transactions per INSERT (xids assigned; 1 by construction, measured as a check). */
  writeTransactionsPerInsert: number;
}

/** How many transaction ids the server has assigned so far (read without assigning one). */
export async function xidCounter(client: pg.Client | pg.Pool): Promise<number> {
  const res = await client.query<{ x: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS x');
  return Number(res.rows[0]!.x);
}

/**
 * The physical floor on the same PostgreSQL: one autocommit INSERT per "step" with plain `pg`, the
 * least a durable step can cost (one WAL flush). Rows look like a step record (run id, key, JSON).
 */
export async function pgFloor(url: string, server: string, options: { steps: number; warmup: number; reps: number }): Promise<FloorResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
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
      const ms = nowMs() - t0;
      const x1 = await xidCounter(client);
      return { us: (ms * 1000) / options.steps, tx: (x1 - x0) / options.steps };
    });
    await client.query('DROP TABLE bench_floor');
    return { server, steps: options.steps, usPerInsert: median(samples.map((s) => s.us)), writeTransactionsPerInsert: median(samples.map((s) => s.tx)) };
  } finally {
    await client.end();
  }
}
