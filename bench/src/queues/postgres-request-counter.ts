import pg from 'pg';
import type { RequestCounter } from './request-counter.js';

/**
 * Top-level statements counted by pg_stat_statements (the bench's PostgreSQL preloads it): a
 * PL/pgSQL routine call is one statement, as it is one round trip. Statements that read or reset
 * pg_stat_statements itself are left out.
 */
export async function openPostgresRequestCounter(url: string): Promise<RequestCounter> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  return {
    async reset() {
      await client.query('SELECT pg_stat_statements_reset()');
    },
    async read() {
      const res = await client.query<{ query: string; calls: string }>(
        "SELECT query, calls::text AS calls FROM pg_stat_statements s WHERE query NOT ILIKE '%pg_stat_statements%' ORDER BY s.calls DESC",
      );
      const rows = res.rows.map((r) => ({ request: r.query.replace(/\s+/g, ' ').slice(0, 120), count: Number(r.calls) }));
      // Enough rows for a per-statement breakdown in the results file (every statement a worker
      // process sends, housekeeping included); the report prints only the first few.
      return { total: rows.reduce((sum, r) => sum + r.count, 0), top: rows.slice(0, 40) };
    },
    async close() {
      await client.end();
    },
  };
}
