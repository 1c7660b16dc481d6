import { sql } from 'kysely';
import { retryRolledBack } from '../dialect/retry-rolled-back.js';
import type { SqlDialect } from '../dialect/types.js';
import { dropPostgresSlotRoutines, postgresSlotRoutines } from './slot-routines.js';
import { lostNamedStatement, namedStatement } from './named-statement.js';
import { statementRunWrites } from '../run-statement-writes.js';
import { postgresRoutineCalls } from './routine-calls.js';
import { postgresSetState } from './state-set.js';
import { postgresStepWrites } from './step-writes.js';
import { postgresRoutineStatements } from './routine-statements.js';
import { postgresSchemaStatements } from './schema-statements.js';
import { routineSlotWrites } from '../slots/routine-slot-writes.js';

// deadlock_detected, serialization_failure: the server rolled the whole transaction back.
const isRolledBack = (error: unknown): boolean => ['40P01', '40001'].includes(String((error as { code?: unknown } | null)?.code));

/** PostgreSQL (driver `pg`): `RETURNING`, data-modifying CTEs, row locks, `SKIP LOCKED`. */
export const postgresDialect: SqlDialect = {
  name: 'postgres',
  maxPayloadBytes: 16 * 1024 * 1024,
  steps: postgresStepWrites,
  runs: statementRunWrites,
  setState: postgresSetState,
  routines: postgresRoutineStatements,
  routineCalls: postgresRoutineCalls,
  returning: true,
  lockForUpdate: (of) => (of === undefined ? sql`for update` : sql`for update of ${sql.id(of)}`),
  skipLocked: () => sql`for update skip locked`,
  insertIgnoreHead: () => sql`insert`,
  insertIgnoreTail: () => sql`on conflict do nothing`,
  onConflictDoNothing: () => sql`on conflict do nothing`,
  upsertTail: (keys, columns) =>
    sql`on conflict (${sql.join(keys.map((k) => sql.id(k)))}) do update set ${sql.join(columns.map((c) => sql`${sql.id(c)} = excluded.${sql.id(c)}`))}`,
  transaction: (db, fn) => retryRolledBack(isRolledBack, () => db.transaction().execute(fn)),
  isRolledBack,
  isDuplicateKey: (error) => (error as { code?: unknown } | null)?.code === '23505',
  schema: postgresSchemaStatements,
  slotWrites: routineSlotWrites,
  slotRoutines: async (_db, names) => postgresSlotRoutines(names),
  dropSlotRoutines: dropPostgresSlotRoutines,
  namedStatement,
  lostNamedStatement,
};
