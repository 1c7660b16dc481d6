import { dialectOf } from '../dialect/detect.js';
import type { AnyKysely, SqlDialectName } from '../dialect/types.js';
import { runStatements } from '../schema/run-statements.js';
import type { TableNames } from '../schema/tables.js';
import type { StepRoutineVersion } from './params.js';

/**
 * What `cairn_0002_step_routines` creates, exactly as it always did: the step-write routines as
 * they were then (no `turn`), MySQL's run and state procedures, or SQLite's triggers.
 */
export async function installRoutines(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  await runStatements(db, await dialectOf(dialect).routines.install(db, names));
}

/** Drops every routine (and SQLite's triggers) of every version: the down of `cairn_0002_step_routines`. */
export async function dropRoutines(db: AnyKysely, names: TableNames, dialect: SqlDialectName): Promise<void> {
  await runStatements(db, dialectOf(dialect).routines.drop(names));
}

/**
 * Replaces the two step-write routines of version `from` with those of version `to` (PostgreSQL
 * functions, MySQL/MariaDB procedures; SQLite has none: its step statements live in the store).
 * The old ones are dropped, not left as overloads, so a database holds one version of each.
 */
export async function replaceStepRoutines(
  db: AnyKysely,
  names: TableNames,
  dialect: SqlDialectName,
  from: StepRoutineVersion,
  to: StepRoutineVersion,
): Promise<void> {
  await runStatements(db, await dialectOf(dialect).routines.replaceStep(db, names, from, to));
}
