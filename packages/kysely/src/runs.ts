import { sql, type RawBuilder } from 'kysely';
import { CairnError, type RunPage, type RunQuery, type RunRecord } from '@cairn/core';
import { decodeRunCursor, encodeRunCursor, mergeTags, normaliseListLimit, toRunSummary, type DeleteCondition, type NewRun } from '@cairn/core/backend';
import { encodeJsonRequired } from './codec/json.js';
import { toRunRecord } from './codec/rows.js';
import { encodeText, keyHash } from './codec/text.js';
import { affected, first, guard, inList, rows, type StoreContext } from './context.js';
import type { AnyKysely } from './dialect/types.js';
import { lacksColumn } from './schema/lacks-column.js';
import { runArtefactTables } from './run-artefact-tables.js';
import { PAUSED_COLUMN, PRIORITY_COLUMN, TAG_WRITES_COLUMN, TAGS_COLUMN } from './schema/added-columns.js';
import { insertTagRows, tagJoin } from './run-tags.js';
import type { RunRow } from './schema/tables.js';

/** `runs.create`: one insert that ignores a duplicate; a read only when it collided. */
export function createRun(ctx: StoreContext) {
  const { t, dialect } = ctx;
  return (input: NewRun, now: number) =>
    guard('runs.create', async () => {
      const idempotencyKey = input.idempotencyKey === undefined ? null : encodeText(input.idempotencyKey);
      const idempotencyHash = idempotencyKey === null ? null : keyHash(idempotencyKey);
      const id = encodeText(input.id);
      const workflow = encodeText(input.workflow);
      const wakeAt = input.wakeAt ?? null;
      // Named only when set: a run without a deadline is written as before cairn_0004_run_deadline.
      const deadlineColumn = sql.raw(input.deadline === undefined ? '' : ', deadline');
      const deadlineValue = input.deadline === undefined ? sql`` : sql`, ${input.deadline}`;
      // Likewise a run that is not a fork is written as before cairn_0006_operations.
      const forkColumns = sql.raw(input.forkedFrom === undefined ? '' : ', forked_from_run_id, forked_from_step_key');
      const forkValues = input.forkedFrom === undefined ? sql`` : sql`, ${encodeText(input.forkedFrom.runId)}, ${encodeText(input.forkedFrom.stepKey)}`;
      // Likewise the trace context (cairn_0007_run_trace_context).
      const traceColumn = sql.raw(input.traceContext === undefined ? '' : ', trace_context_json');
      const traceValue = input.traceContext === undefined ? sql`` : sql`, ${encodeJsonRequired(input.traceContext)}`;
      // Likewise a run without a priority (absent or 0 is stored NULL: cairn_0011_slots).
      const priority = input.priority === undefined || input.priority === 0 ? undefined : input.priority;
      const priorityColumn = sql.raw(priority === undefined ? '' : ', priority');
      const priorityValue = priority === undefined ? sql`` : sql`, ${priority}`;
      // Likewise a run without tags (cairn_0017_run_tags); one with tags also gets its run_tags rows.
      const tags = input.tags === undefined || Object.keys(input.tags).length === 0 ? undefined : input.tags;
      const tagsColumn = sql.raw(tags === undefined ? '' : ', tags_json');
      const tagsValue = tags === undefined ? sql`` : sql`, ${encodeJsonRequired(tags)}`;
      const insert = sql`insert into ${t.runs}
        (id, workflow, version, input_json, status, parent_run_id, parent_step_key, idempotency_key, idempotency_hash,
         fence, cancel_requested, wake_at, due_at, created_at, updated_at${deadlineColumn}${forkColumns}${traceColumn}${priorityColumn}${tagsColumn})
        values (${id}, ${workflow}, ${encodeText(input.version)}, ${encodeJsonRequired(input.input)}, 'pending',
         ${input.parent ? encodeText(input.parent.runId) : null}, ${input.parent ? encodeText(input.parent.stepKey) : null},
         ${idempotencyKey}, ${idempotencyHash}, 0, 0, ${wakeAt}, ${wakeAt}, ${now}, ${now}${deadlineValue}${forkValues}${traceValue}${priorityValue}${tagsValue})
        ${dialect.onConflictDoNothing()}`;
      // A collision can only be with a run that a concurrent delete may remove: try a few times.
      for (let round = 0; round < 3; round += 1) {
        let inserted: boolean;
        try {
          inserted =
            tags === undefined
              ? (await affected(ctx.db, insert)) === 1
              : // The run and its tag rows in one transaction: the run is never visible unfindable by its tags.
                await dialect.transaction(ctx.db, async (trx) => {
                  const made = (await affected(trx, insert)) === 1;
                  if (made) await insertTagRows(trx, ctx, id, now, tags);
                  return made;
                });
        } catch (error) {
          if (!dialect.isDuplicateKey(error)) throw error;
          inserted = false;
        }
        if (inserted) {
          const run: RunRecord = {
            id: input.id,
            workflow: input.workflow,
            version: input.version,
            input: structuredClone(input.input),
            status: 'pending',
            fence: 0,
            cancelRequested: false,
            createdAt: now,
            updatedAt: now,
          };
          if (input.parent) run.parent = { runId: input.parent.runId, stepKey: input.parent.stepKey };
          if (input.idempotencyKey !== undefined) run.idempotencyKey = input.idempotencyKey;
          if (input.wakeAt !== undefined) run.wakeAt = input.wakeAt;
          if (input.deadline !== undefined) run.deadline = input.deadline;
          if (input.forkedFrom !== undefined) run.forkedFrom = { runId: input.forkedFrom.runId, stepKey: input.forkedFrom.stepKey };
          if (input.traceContext !== undefined) run.traceContext = { ...input.traceContext };
          if (priority !== undefined) run.priority = priority;
          if (tags !== undefined) run.tags = mergeTags(undefined, tags);
          return { run, created: true };
        }
        if (idempotencyHash !== null) {
          const existing = await first(ctx.db, sql<RunRow>`select * from ${t.runs} where workflow = ${workflow} and idempotency_hash = ${idempotencyHash}`);
          if (existing) return { run: toRunRecord(existing), created: false };
        }
        const clash = await first(ctx.db, sql`select id from ${t.runs} where id = ${id}`);
        if (clash) throw new CairnError('INVALID_INPUT', `Run id ${input.id} already exists`, { data: { runId: input.id } });
      }
      throw new CairnError('STORE_ERROR', `runs.create: run ${input.id} kept colliding with rows that vanished`);
    });
}

/** Reads one run by id. */
export async function readRun(ctx: StoreContext, executor: AnyKysely, runId: string): Promise<RunRecord | undefined> {
  const row = await first(executor, sql<RunRow>`select * from ${ctx.t.runs} where id = ${encodeText(runId)}`);
  return row === undefined ? undefined : toRunRecord(row);
}

/** `runs.get`. */
export function getRun(ctx: StoreContext) {
  return (runId: string) => guard('runs.get', () => readRun(ctx, ctx.db, runId));
}

// What `runs.list` reads: every column but the payloads (input, output, retry records) and the
// trace context (a summary need not carry it; reading it would tie lists to cairn_0007).
const SUMMARY_COLUMNS = [
  'id',
  'workflow',
  'version',
  'status',
  'error_json',
  'parent_run_id',
  'parent_step_key',
  'idempotency_key',
  'lease_owner',
  'lease_expires_at',
  'fence',
  'cancel_requested',
  'wake_at',
  'created_at',
  'updated_at',
  'deadline',
  'cancel_reason',
  'forked_from_run_id',
  'forked_from_step_key',
];
// A database a release behind (before cairn_0017_run_tags, cairn_0015_run_pause or
// cairn_0011_slots) still lists its runs, without tags (pauses, priorities): each list is tried
// when the one before it named a column the database lacks.
const SUMMARY_LISTS = [
  [...SUMMARY_COLUMNS, PRIORITY_COLUMN, PAUSED_COLUMN, TAGS_COLUMN, TAG_WRITES_COLUMN],
  [...SUMMARY_COLUMNS, PRIORITY_COLUMN, PAUSED_COLUMN],
  [...SUMMARY_COLUMNS, PRIORITY_COLUMN],
  SUMMARY_COLUMNS,
].map((columns) => sql.raw(columns.join(', ')));
const ADDED_COLUMNS = [TAGS_COLUMN, TAG_WRITES_COLUMN, PAUSED_COLUMN, PRIORITY_COLUMN];

/**
 * `runs.list`: keyset pagination on (created_at desc, id desc), reading no payload column. Each
 * filter maps onto an index: idempotency key → (workflow, idempotency_hash) (one row at most),
 * parent → (parent_run_id, created_at, id), workflow and status → (workflow, status, created_at,
 * id) (`cairn_0014_runs_workflow_status`), status → (status, created_at, id), workflow →
 * (workflow, created_at, id), none → (created_at, id). Several statuses are one page per status,
 * merged (a UNION ALL of index ranges).
 */
export function listRuns(ctx: StoreContext) {
  return (query: RunQuery) =>
    guard('runs.list', async (): Promise<RunPage> => {
      const limit = normaliseListLimit(query.limit);
      const after = query.cursor === undefined ? undefined : decodeRunCursor(query.cursor);
      const where: RawBuilder<unknown>[] = [];
      if (query.workflow !== undefined) where.push(sql`workflow = ${encodeText(query.workflow)}`);
      const statuses = query.status === undefined ? [] : [...new Set([query.status].flat())];
      if (query.status !== undefined && statuses.length === 0) return { runs: [] };
      if (query.createdAfter !== undefined) where.push(sql`created_at >= ${query.createdAfter}`);
      if (query.createdBefore !== undefined) where.push(sql`created_at < ${query.createdBefore}`);
      if (query.parentRunId !== undefined) where.push(sql`parent_run_id = ${encodeText(query.parentRunId)}`);
      if (query.idempotencyKey !== undefined) where.push(sql`idempotency_hash = ${keyHash(encodeText(query.idempotencyKey))}`);
      if (after !== undefined) {
        // With tags, the position is taken on the tag index's copy of (created_at, id).
        where.push(
          query.tags === undefined
            ? sql`created_at <= ${after.createdAt} and (created_at < ${after.createdAt} or id < ${after.id})`
            : sql`g0.run_created_at <= ${after.createdAt} and (g0.run_created_at < ${after.createdAt} or g0.run_id < ${after.id})`,
        );
      }
      const newest = (columns: RawBuilder<unknown>, status?: string) => {
        const all = status === undefined ? where : [sql`status = ${status}`, ...where];
        const condition = all.length === 0 ? sql`` : sql`where ${sql.join(all, sql` and `)}`;
        return sql`select ${columns} from ${ctx.t.runs} ${condition} order by created_at desc, id desc limit ${limit + 1}`;
      };
      // Several statuses: the newest page of each status (one range of the (status, created_at, id)
      // index each), merged. A single `status in (...)` cannot walk that index in created_at
      // order: the planner scans every run newest first and filters (as long as the page takes
      // to fill: the whole table when the statuses are rare) or sorts every matching run.
      const select = (columns: RawBuilder<unknown>) =>
        rows(
          ctx.db,
          statuses.length <= 1
            ? sql<RunRow>`${newest(columns, statuses[0])}`
            : sql<RunRow>`${sql.join(
                statuses.map((status, i) => sql`select * from (${newest(columns, status)}) ${sql.raw(`s${i}`)}`),
                sql` union all `,
              )} order by created_at desc, id desc limit ${limit + 1}`,
        );
      const found = await selectSummaries(query.tags === undefined ? select : (columns) => selectTagged(ctx, query, where, statuses, limit, columns));
      const page = found.slice(0, limit);
      const result: RunPage = { runs: page.map((row) => toRunSummary(toRunRecord(row))) };
      const last = page[page.length - 1];
      if (found.length > limit && last) {
        // The cursor carries the stored id, which is what the keyset condition compares.
        result.nextCursor = encodeRunCursor({ createdAt: Number(last.created_at), id: String(last.id) });
      }
      return result;
    });
}

/** The first of `SUMMARY_LISTS` the database has every column of, read by `select`. */
async function selectSummaries(select: (columns: RawBuilder<unknown>) => Promise<RunRow[]>): Promise<RunRow[]> {
  for (let i = 0; ; i += 1) {
    try {
      return await select(SUMMARY_LISTS[i] as RawBuilder<unknown>);
    } catch (error) {
      if (i === SUMMARY_LISTS.length - 1 || !ADDED_COLUMNS.some((column) => lacksColumn(error, column))) throw error;
    }
  }
}

/**
 * A page of runs with tags (`cairn_0017_run_tags`): the first tag's range of the `run_tags_find`
 * index (tag_hash, run_created_at, run_id), newest first, each row joined to its run by primary key
 * and filtered by the other tags (primary-key probes) and filters. It reads the runs of that tag
 * down to the page's end, never the whole table.
 */
function selectTagged(
  ctx: StoreContext,
  query: RunQuery,
  where: RawBuilder<unknown>[],
  statuses: string[],
  limit: number,
  columns: RawBuilder<unknown>,
): Promise<RunRow[]> {
  const tags = tagJoin(ctx, query.tags as Record<string, string>);
  const all = [...where, ...tags.where];
  if (statuses.length > 0) all.push(sql`status in ${inList(statuses)}`);
  // The time range on the index's copy of created_at too, so it bounds the index range.
  if (query.createdAfter !== undefined) all.push(sql`g0.run_created_at >= ${query.createdAfter}`);
  if (query.createdBefore !== undefined) all.push(sql`g0.run_created_at < ${query.createdBefore}`);
  const condition = all.length === 0 ? sql`` : sql`where ${sql.join(all, sql` and `)}`;
  return rows(
    ctx.db,
    sql<RunRow>`select ${columns} from ${ctx.t.runs} r ${tags.join} ${condition} order by g0.run_created_at desc, g0.run_id desc limit ${limit + 1}`,
  );
}

/**
 * `runs.delete`: one transaction that locks the run row first (so in-flight writes of the run
 * finish before, and later ones find no run), checks `condition` on the locked row, then removes
 * attempts, steps, state, events and the run. Nothing of the run is left, and nothing
 * half-deleted is ever visible.
 */
export function deleteRun(ctx: StoreContext) {
  const { t, dialect } = ctx;
  return (runId: string, condition?: DeleteCondition) =>
    guard('runs.delete', () =>
      dialect.transaction(ctx.db, async (trx) => {
        const id = encodeText(runId);
        const row = await first(
          trx,
          sql<{ status: string; updated_at: number | string }>`select status, updated_at from ${t.runs} where id = ${id} ${dialect.lockForUpdate()}`,
        );
        if (row === undefined) return false;
        if (condition && (!condition.statuses.includes(row.status as never) || !(Number(row.updated_at) < condition.updatedBefore))) return false;
        for (const table of runArtefactTables(t)) {
          await sql`delete from ${table} where run_id = ${id}`.execute(trx);
        }
        await sql`delete from ${t.runs} where id = ${id}`.execute(trx);
        return true;
      }),
    );
}
