import { CompiledQuery } from 'kysely';
import { CairnError } from '@cairn/core';
import type { StoreContext } from '../context.js';
import type { RoutineCalls, SqlDialectName } from '../dialect/types.js';
import { retryRolledBack } from '../dialect/retry-rolled-back.js';
import { CAIRN_MIGRATION_NAMES } from '../schema/migration-names.js';
import type { RoutineParam } from './params.js';

/**
 * Calls a stored routine in ONE round trip and returns the first row of its result, if any, as
 * the dialect's `routineCalls` shape it (`select * from fn(...)` on PostgreSQL, `call proc(...)`
 * on MySQL/MariaDB). A routine is one transaction, so a deadlock victim was rolled back whole
 * and is run again. A routine missing
 * from the database, or one older than the store (another argument list), is a `STORE_ERROR` that
 * says to run the migrations (`createdBy`: the migration that creates it, when not the step routines').
 */
export async function callRoutine<Row>(
  ctx: StoreContext,
  name: string,
  params: readonly RoutineParam[],
  args: (string | number | null)[],
  createdBy?: string,
): Promise<Row | undefined> {
  const calls = ctx.dialect.routineCalls;
  if (calls === undefined) throw new CairnError('STORE_ERROR', `The ${ctx.dialect.name} store has no stored routines (called ${name})`);
  const rows = await callRoutineText(ctx, name, callText(ctx.dialect.name, calls, name, params), args, createdBy);
  return calls.resultSet(rows)[0] as Row | undefined;
}

/**
 * Sends `text`, a call of the routine `name` written by the caller, in ONE round trip and returns
 * the rows as the driver handed them over; the retry and the errors of `callRoutine`.
 */
export async function callRoutineText(
  ctx: StoreContext,
  name: string,
  text: string,
  args: readonly (string | number | null)[],
  createdBy?: string,
): Promise<readonly unknown[]> {
  const sent = ctx.routineSql(text);
  const query = CompiledQuery.raw(sent, args as unknown[]);
  try {
    const { rows } = await retryRolledBack(ctx.dialect.isRolledBack, () => ctx.db.executeQuery<unknown>(query));
    return rows;
  } catch (error) {
    // A named statement the connection did not keep never ran (each call is its own transaction):
    // send it again, unnamed, as every later call will be. Also when another call refused at the
    // same time already made the store fall back: this one went out named before that.
    if (sent !== text && ctx.dialect.lostNamedStatement?.(error) === true) {
      ctx.dropNamedStatements(error);
      return callRoutineText(ctx, name, text, args, createdBy);
    }
    if (isMissingRoutine(error)) {
      const where = createdBy ?? `${CAIRN_MIGRATION_NAMES[1]} (the step routines are replaced by ${CAIRN_MIGRATION_NAMES[2]})`;
      throw new CairnError(
        'STORE_ERROR',
        `The stored routine ${name} does not exist or is older than this store: run Cairn's migrations (migrateToLatest(db), or cairnMigrations() in your Migrator), which create it in ${where}`,
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * PostgreSQL undefined_function (also what a call with the arguments of another version gets),
 * MySQL ER_SP_DOES_NOT_EXIST and ER_SP_WRONG_NO_OF_ARGS (a procedure of another version).
 */
function isMissingRoutine(error: unknown): boolean {
  const e = error as { code?: unknown; errno?: unknown } | null;
  return e?.code === '42883' || e?.errno === 1305 || e?.errno === 1318;
}

// The text of each call is fixed per dialect and routine: built once, sent as a compiled query,
// so a write spends nothing on building SQL (measured: a large share of a write's client time).
const callTexts = new Map<string, string>();

function callText(dialect: SqlDialectName, calls: RoutineCalls, name: string, params: readonly RoutineParam[]): string {
  const cacheKey = `${dialect}:${name}`;
  let text = callTexts.get(cacheKey);
  if (text === undefined) {
    text = calls.text(name, params);
    callTexts.set(cacheKey, text);
  }
  return text;
}
