/**
 * The statement of the adapter's idle poll: of the queue names in `$1` (a text array), those with
 * at least one job a fetch would take now — pg-boss's own fetch conditions (`state < 'active'`,
 * not blocked, `start_after <= job_now()`), answered from its partial index `job_i11` (name, ...)
 * WHERE state < 'active' AND NOT blocked. `schema` and `table` are pg-boss's, as its own SQL
 * writes them (the schema given to the PgBoss; the table from `getQueue().table`).
 */
export function readyQueuesSql(schema: string, table: string): string {
  return `SELECT q.name FROM unnest($1::text[]) AS q(name) WHERE EXISTS (
    SELECT 1 FROM ${schema}.${table} j
    WHERE j.name = q.name AND j.state < 'active' AND NOT j.blocked AND j.start_after <= ${schema}.job_now()
  )`;
}
