import { sql } from 'kysely';
import { retryRolledBack } from '../dialect/retry-rolled-back.js';
import { mysqlCollation } from './collation.js';
import { dropMysqlSlotRoutines, mysqlSlotRoutines } from './slot-routines.js';
import type { SqlDialect } from '../dialect/types.js';
import { mysqlRoutineCalls } from './routine-calls.js';
import { mysqlRunWrites } from './run-writes.js';
import { mysqlSetState } from './state-set.js';
import { mysqlStepWrites } from './step-writes.js';
import { mysqlRoutineStatements } from './routine-statements.js';
import { mysqlSchemaStatements } from './schema-statements.js';
import { routineSlotWrites } from '../slots/routine-slot-writes.js';

// ER_LOCK_DEADLOCK: InnoDB chose this transaction as a deadlock victim and rolled all of it back.
const isRolledBack = (error: unknown): boolean => (error as { errno?: unknown } | null)?.errno === 1213;

/**
 * MySQL 8 / MariaDB 10.6+ (driver `mysql2`): no `UPDATE ... RETURNING`, so a write that must
 * return its row updates and reads back inside one transaction. `INSERT IGNORE` only where the
 * row's columns cannot be truncated.
 */
export const mysqlDialect: SqlDialect = {
  name: 'mysql',
  maxPayloadBytes: 8 * 1024 * 1024,
  steps: mysqlStepWrites,
  runs: mysqlRunWrites,
  setState: mysqlSetState,
  routines: mysqlRoutineStatements,
  routineCalls: mysqlRoutineCalls,
  returning: false,
  lockForUpdate: () => sql`for update`,
  skipLocked: () => sql`for update skip locked`,
  insertIgnoreHead: () => sql`insert ignore`,
  insertIgnoreTail: () => sql``,
  onConflictDoNothing: () => sql``,
  upsertTail: (_keys, columns) => sql`on duplicate key update ${sql.join(columns.map((c) => sql`${sql.id(c)} = values(${sql.id(c)})`))}`,
  transaction: (db, fn) => retryRolledBack(isRolledBack, () => db.transaction().execute(fn)),
  isRolledBack,
  isDuplicateKey: (error) => {
    const e = error as { code?: unknown; errno?: unknown } | null;
    return e?.code === 'ER_DUP_ENTRY' || e?.errno === 1062;
  },
  schema: mysqlSchemaStatements,
  slotWrites: routineSlotWrites,
  // MySQL has no `create or replace procedure`: a try that failed half-way made some already.
  slotRoutines: async (db, names) => [...dropMysqlSlotRoutines(names), ...mysqlSlotRoutines(names, await mysqlCollation(db))],
  dropSlotRoutines: dropMysqlSlotRoutines,
};
