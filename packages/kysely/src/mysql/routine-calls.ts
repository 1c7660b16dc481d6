import { CompiledQuery } from 'kysely';
import { retryRolledBack } from '../dialect/retry-rolled-back.js';
import type { RoutineCalls } from '../dialect/types.js';
import { missingRoutine } from '../routines/missing-routine.js';

// ER_SP_DOES_NOT_EXIST, and ER_SP_WRONG_NO_OF_ARGS (a procedure of another version).
const MISSING_PROCEDURE = new Set([1305, 1318]);

/**
 * MySQL/MariaDB call a procedure as `call proc(?, ...)`; mysql2 returns a CALL's result sets
 * followed by its status packet, and the first set is the procedure's. A call is one round trip; a
 * deadlock victim (the procedure's transaction, rolled back whole) is run again; a procedure
 * missing or of another version is the "run the migrations" `STORE_ERROR`.
 */
export const mysqlRoutineCalls: RoutineCalls = {
  text: (name, params) => `call \`${name}\`(${params.map(() => '?').join(', ')})`,
  resultSet: (rows) => (Array.isArray(rows[0]) ? (rows[0] as unknown[]) : rows),
  async send(ctx, name, text, args, createdBy) {
    const query = CompiledQuery.raw(text, args as unknown[]);
    try {
      const { rows } = await retryRolledBack(ctx.dialect.isRolledBack, () => ctx.db.executeQuery<unknown>(query));
      return rows;
    } catch (error) {
      if (MISSING_PROCEDURE.has((error as { errno?: unknown } | null)?.errno as number)) throw missingRoutine(name, error, createdBy);
      throw error;
    }
  },
};
