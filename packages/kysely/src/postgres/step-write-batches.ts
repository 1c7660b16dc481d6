import type { StoreContext } from '../context.js';
import { STEP_INSERT_PARAMS, STEP_TRANSITION_PARAMS, routineNames, type RoutineParam } from '../routines/params.js';
import { postgresParamTypes } from './param-types.js';
import { CAIRN_MIGRATION_NAMES } from '../schema/migration-names.js';
import type { StepRow } from '../schema/tables.js';
import { GroupCommit, type GroupCommitLimits, type GroupCommitSender } from './group-commit.js';
import { postgresRoutineCalls } from './routine-calls.js';
import { stepInsertV2Name } from './step-insert-v2-routine.js';

/** The arguments of one routine call, in parameter order. */
export type CallArgs = readonly (string | number | null)[];

/** What `step_insert_v2` returns (NULL when it wrote the step). */
export type InsertResult = unknown;

/**
 * The row `step_transition` returns: the run's fence and status (NULL: no such run), whether the
 * step matched and was written, the step as it stands after the call.
 */
export type TransitionRow = { r_fence: unknown; r_status: unknown; done: unknown; step?: StepRow | null };

/** The two lines every PostgreSQL step write of one store goes through. */
export interface StepWriteLines {
  insert: GroupCommit<CallArgs, InsertResult>;
  transition: GroupCommit<CallArgs, TransitionRow | undefined>;
}

// Where a database missing the insert function is sent: every migration on the way to it.
export const INSERT_CREATED_BY = `${CAIRN_MIGRATION_NAMES[10]}, after the step routines of ${CAIRN_MIGRATION_NAMES[1]} (replaced by ${CAIRN_MIGRATION_NAMES[2]} and ${CAIRN_MIGRATION_NAMES[7]})`;

// Writes per statement at most, and bytes of payload per statement at most.
const MAX_WRITES = 128;
const MAX_WEIGHT = 4 * 1024 * 1024;
// How many writes must wait for a statement to go out beside one in flight (decision 71): fewer
// wait for the statements in flight and then share one commit, which at 8 runs in flight measured
// as fast as anything else; a larger group is split over statements the server runs side by side.
const PARALLEL_FROM = 8;
// `groupCommit: false`: a slot for every write, so none ever waits and each goes out alone.
const NO_GROUPING: GroupCommitLimits = { slots: Number.POSITIVE_INFINITY, maxWrites: 1, maxWeight: 0, parallelFrom: 1 };

// The limits of a store's step write lines (`groupCommit`, `groupCommitStatements`).
function lineLimits(ctx: StoreContext): GroupCommitLimits {
  if (!ctx.groupCommit) return NO_GROUPING;
  return { slots: ctx.groupCommitStatements, maxWrites: MAX_WRITES, maxWeight: MAX_WEIGHT, parallelFrom: PARALLEL_FROM };
}

const lines = new WeakMap<StoreContext, StepWriteLines>();

/** The step write lines of the store `ctx` belongs to (made on its first step write). */
export function stepWriteLines(ctx: StoreContext): StepWriteLines {
  let made = lines.get(ctx);
  if (made === undefined) {
    const limits = lineLimits(ctx);
    made = { insert: new GroupCommit(insertSender(ctx), limits), transition: new GroupCommit(transitionSender(ctx), limits) };
    lines.set(ctx, made);
  }
  return made;
}

// The texts per table prefix, built once.
const texts = new Map<string, string>();
function cached(key: string, build: () => string): string {
  let text = texts.get(key);
  if (text === undefined) texts.set(key, (text = build()));
  return text;
}

/** `select "<prefix>step_insert_v2"($1::text, ...) as r`: one write alone, as before group commit. */
export function insertCallText(prefix: string): string {
  return cached(`insert:${prefix}`, () => {
    const placeholders = postgresParamTypes(STEP_INSERT_PARAMS).map((type, i) => `$${i + 1}::${type}`);
    return `select "${stepInsertV2Name(prefix)}"(${placeholders.join(', ')}) as r`;
  });
}

/** `select * from "<prefix>step_transition"($1::text, ...)`: one write alone, as before group commit. */
export function transitionCallText(prefix: string): string {
  return cached(`transition:${prefix}`, () => postgresRoutineCalls.text(routineNames(prefix).stepTransition, STEP_TRANSITION_PARAMS));
}

/**
 * One call of `fn` per element of the argument arrays, in array order, in ONE statement: one array
 * parameter per routine parameter, `unnest`ed together (the i-th elements are the i-th call's
 * arguments, `t.i` its position), the function called LATERAL row by row (`join` places the call).
 * One text whatever the number of writes, so a named statement is planned once per connection.
 */
function batchText(fn: string, params: readonly RoutineParam[], select: string, join: (call: string) => string): string {
  const names = params.map(([name]) => name);
  const arrays = postgresParamTypes(params).map((type, i) => `$${i + 1}::${type}[]`);
  const call = `"${fn}"(${names.map((n) => `t.${n}`).join(', ')})`;
  return `select t.i, ${select} from unnest(${arrays.join(', ')}) with ordinality as t(${names.join(', ')}, i) ${join(call)}`;
}

const insertBatchText = (prefix: string) =>
  cached(`insert-batch:${prefix}`, () => batchText(stepInsertV2Name(prefix), STEP_INSERT_PARAMS, 'f.r', (call) => `cross join lateral ${call} as f(r)`));

// `step_transition` returns no row when the run does not exist: kept as a row of NULLs.
const transitionBatchText = (prefix: string) =>
  cached(`transition-batch:${prefix}`, () =>
    batchText(routineNames(prefix).stepTransition, STEP_TRANSITION_PARAMS, 'f.*', (call) => `left join lateral ${call} as f on true`),
  );

/** A PostgreSQL array literal of `values` (`{"a",NULL,3}`), sent as text: the same for every driver. */
export function arrayLiteral(values: readonly (string | number | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'number') out += String(v);
    else out += `"${v.replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${out}}`;
}

/**
 * The writes as array parameters, ordered by run id so that every statement share-locks its runs'
 * rows in one order (two batches never wait for each other in a circle); `order[k]` is the index
 * in `writes` of the k-th call.
 */
function columns(writes: readonly CallArgs[], width: number, override?: (column: number, values: (string | number | null)[]) => void) {
  const order = writes.map((_, i) => i).sort((a, b) => compare(String(writes[a]?.[0]), String(writes[b]?.[0])) || a - b);
  const params: string[] = [];
  for (let c = 0; c < width; c++) {
    const values = order.map((i) => (writes[i] as CallArgs)[c] ?? null);
    override?.(c, values);
    params.push(arrayLiteral(values));
  }
  return { order, params };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Each write's row of a batch statement, in the order the writes were given. */
function byWrite<R>(rows: readonly unknown[], order: readonly number[], pick: (row: Record<string, unknown>) => R): R[] {
  const out = new Array<R>(order.length);
  for (const row of rows as Record<string, unknown>[]) out[order[Number(row.i) - 1] as number] = pick(row);
  return out;
}

// What the server refused for what a statement holds rather than for the connection: data
// exceptions (22), integrity violations (23), syntax or access (42), program limits (54), a
// PL/pgSQL raise (P0). Sent again write by write, the one at fault fails alone.
const SPLITTABLE = new Set(['22', '23', '42', '54', 'P0']);
function splittable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && SPLITTABLE.has(code.slice(0, 2));
}

function weight(args: CallArgs): number {
  let bytes = 0;
  for (const v of args) if (typeof v === 'string') bytes += v.length;
  return bytes;
}

const ASYNC = STEP_INSERT_PARAMS.length - 1;

function insertSender(ctx: StoreContext): GroupCommitSender<CallArgs, InsertResult> {
  const prefix = ctx.names.prefix;
  const name = stepInsertV2Name(prefix);
  return {
    async one(args) {
      const rows = await postgresRoutineCalls.send(ctx, name, insertCallText(prefix), args, INSERT_CREATED_BY);
      return (rows[0] as { r: unknown } | undefined)?.r;
    },
    async many(writes) {
      // `synchronous_commit = off` holds for a whole transaction: only when every write of it is a
      // running step's start may it commit without waiting for the flush.
      const allAsync = writes.every((w) => w[ASYNC] === 1);
      const { order, params } = columns(writes, STEP_INSERT_PARAMS.length, (c, values) => {
        if (c === ASYNC && !allAsync) values.fill(0);
      });
      const rows = await postgresRoutineCalls.send(ctx, name, insertBatchText(prefix), params, INSERT_CREATED_BY);
      return byWrite(rows, order, (row) => row.r);
    },
    splittable,
    weight,
  };
}

function transitionSender(ctx: StoreContext): GroupCommitSender<CallArgs, TransitionRow | undefined> {
  const prefix = ctx.names.prefix;
  const name = routineNames(prefix).stepTransition;
  return {
    async one(args) {
      const rows = await postgresRoutineCalls.send(ctx, name, transitionCallText(prefix), args);
      return rows[0] as TransitionRow | undefined;
    },
    async many(writes) {
      const { order, params } = columns(writes, STEP_TRANSITION_PARAMS.length);
      const rows = await postgresRoutineCalls.send(ctx, name, transitionBatchText(prefix), params);
      return byWrite(rows, order, (row) => row as TransitionRow);
    },
    splittable,
    weight,
  };
}
