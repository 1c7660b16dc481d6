import { CairnError } from '@cairn/core';
import type { StoreContext } from '../context.js';
import type { RoutineCalls, SqlDialectName } from '../dialect/types.js';
import type { RoutineParam } from './params.js';

/**
 * Calls a stored routine in ONE round trip and returns the first row of its result, if any: the
 * dialect's `routineCalls` write the call (`select * from fn(...)` on PostgreSQL, `call proc(...)`
 * on MySQL/MariaDB), send it (a deadlock victim, rolled back whole, is run again; a routine missing
 * from the database or older than the store is a `STORE_ERROR` that says to run the migrations,
 * `createdBy` naming the migration that creates it when it is not the step routines') and find its
 * rows among what the driver returned.
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
  const rows = await calls.send(ctx, name, callText(ctx.dialect.name, calls, name, params), args, createdBy);
  return calls.resultSet(rows)[0] as Row | undefined;
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
