import { CompiledQuery } from 'kysely';
import type { StoreContext } from '../context.js';
import { retryRolledBack } from '../dialect/retry-rolled-back.js';
import type { RoutineCalls } from '../dialect/types.js';
import { missingRoutine } from '../routines/missing-routine.js';
import { lostNamedStatement } from './named-statement.js';
import { postgresParamTypes } from './param-types.js';

/**
 * Sends `text`, a call of the function `name`, in ONE round trip: as a named statement under
 * `preparedStatements` (`ctx.routineSql`), a deadlock victim (one call is one transaction, rolled
 * back whole) run again. A named statement the connection did not keep never ran: it is sent again
 * unnamed, as every later call will be (also when another call refused at the same time already
 * made the store fall back: this one went out named before that). `undefined_function` (also what
 * a call with the arguments of another version gets) is the "run the migrations" `STORE_ERROR`.
 */
async function send(ctx: StoreContext, name: string, text: string, args: readonly (string | number | null)[], createdBy?: string): Promise<readonly unknown[]> {
  const sent = ctx.routineSql(text);
  const query = CompiledQuery.raw(sent, args as unknown[]);
  try {
    const { rows } = await retryRolledBack(ctx.dialect.isRolledBack, () => ctx.db.executeQuery<unknown>(query));
    return rows;
  } catch (error) {
    if (sent !== text && lostNamedStatement(error)) {
      ctx.dropNamedStatements(error);
      return send(ctx, name, text, args, createdBy);
    }
    if ((error as { code?: unknown } | null)?.code === '42883') throw missingRoutine(name, error, createdBy);
    throw error;
  }
}

/**
 * PostgreSQL calls a routine as `select * from fn($1::type, ...)` (typed placeholders, so a call
 * resolves to the one function of that argument list); the rows are the function's.
 */
export const postgresRoutineCalls: RoutineCalls = {
  text: (name, params) =>
    `select * from "${name}"(${postgresParamTypes(params)
      .map((type, i) => `$${i + 1}::${type}`)
      .join(', ')})`,
  resultSet: (rows) => rows,
  send,
};
