/**
 * Would group commit pay on MariaDB? (issue 30 part 2, decision 60.) The ceiling of what it could
 * win, measured on the test provider's MariaDB with each flush setting: N connections each running
 * a loop of autocommit INSERTs (the floor, one commit per row, MariaDB's own group commit merging
 * the flushes of concurrent commits), against one connection writing the same rows N at a time,
 * one multi-row INSERT per transaction (what a perfect group commit would send). Rows as the
 * PostgreSQL floor's (run id, key, JSON, time). Medians of interleaved repetitions, per row.
 *
 *   pnpm --filter @cairn/bench run experiment:mariadb-group-commit [--rows=100] [--reps=7]
 */
import { parseArgs } from 'node:util';
import mysql from 'mysql2/promise';
import { Servers } from '../servers/servers.js';
import { median, nowMs } from '../stats.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100' }, reps: { type: 'string', default: '7' } } });
const ROWS = Number(values.rows);
const REPS = Number(values.reps);
const LEVELS = [8, 64];

const servers = new Servers((line) => process.stderr.write(`${line}\n`));
const service = await servers.service('mysql');
const pool = mysql.createPool({ uri: service.url, connectionLimit: Math.max(...LEVELS) + 1 });
let loop = 0;
try {
  await pool.query(
    'CREATE TABLE IF NOT EXISTS gc_floor (run_id VARCHAR(64) NOT NULL, k VARCHAR(64) NOT NULL, output LONGTEXT, created_at BIGINT NOT NULL, PRIMARY KEY (run_id, k))',
  );
  for (const flush of [1, 0]) {
    await pool.query(`SET GLOBAL innodb_flush_log_at_trx_commit = ${flush}`);
    for (const n of LEVELS) {
      const floor: number[] = [];
      const grouped: number[] = [];
      for (let rep = 0; rep < REPS + 1; rep++) {
        const base = `r${++loop}`;
        const t0 = nowMs();
        await Promise.all(
          Array.from({ length: n }, async (_, j) => {
            for (let i = 0; i < ROWS; i++) await pool.execute('INSERT INTO gc_floor VALUES (?, ?, ?, ?)', [`${base}-${j}`, `s${i}`, 'null', Date.now()]);
          }),
        );
        const t1 = nowMs();
        const conn = await pool.getConnection();
        try {
          for (let i = 0; i < ROWS; i++) {
            const rows = Array.from({ length: n }, (_, j) => [`${base}-g${j}`, `s${i}`, 'null', Date.now()]);
            await conn.query('INSERT INTO gc_floor VALUES ?', [rows]);
          }
        } finally {
          conn.release();
        }
        const t2 = nowMs();
        // The first repetition warms up.
        if (rep === 0) continue;
        floor.push(((t1 - t0) * 1000) / (n * ROWS));
        grouped.push(((t2 - t1) * 1000) / (n * ROWS));
      }
      const f = median(floor);
      const g = median(grouped);
      console.log(
        `innodb_flush_log_at_trx_commit=${flush}, ${n} writers: floor ${f.toFixed(1)} µs/row, one ${n}-row INSERT per commit ${g.toFixed(1)} µs/row (${(g / f).toFixed(2)}×)`,
      );
    }
  }
  await pool.query('DROP TABLE gc_floor');
} finally {
  await pool.end();
  await servers.stopAll();
}
