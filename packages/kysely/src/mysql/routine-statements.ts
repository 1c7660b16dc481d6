import { sql } from 'kysely';
import type { AnyKysely, RoutineStatements } from '../dialect/types.js';
import type { StepRoutineVersion } from '../routines/params.js';
import { mysqlRunRoutineNames } from './run-params.js';
import { dropMysqlRoutines, dropMysqlStepRoutines, mysqlRoutines, mysqlStepRoutines } from './step-routines.js';
import { mysqlRequestCancelRoutine, mysqlRunClaimRoutine } from './run-routines.js';
import type { TableNames } from '../schema/tables.js';
import { mysqlCollation } from './collation.js';

const replaceStep = async (db: AnyKysely, names: TableNames, to: StepRoutineVersion) => [
  ...dropMysqlStepRoutines(names),
  ...mysqlStepRoutines(names, await mysqlCollation(db), to),
];

/**
 * MySQL/MariaDB's procedures as migrations create, replace and drop them; their text parameters
 * carry the tables' collation, read from the server.
 */
export const mysqlRoutineStatements: RoutineStatements = {
  install: async (db, names) => mysqlRoutines(names, await mysqlCollation(db), '0002'),
  drop: dropMysqlRoutines,
  replaceStep: (db, names, _from, to) => replaceStep(db, names, to),
  installFinishedStep: (db, names) => replaceStep(db, names, '0008'),
  removeFinishedStep: (db, names) => replaceStep(db, names, '0003'),
  replaceRequestCancel: async (db, names, version) => {
    await sql.raw(`drop procedure if exists \`${mysqlRunRoutineNames(names.prefix).runRequestCancel}\``).execute(db);
    await sql.raw(mysqlRequestCancelRoutine(names, await mysqlCollation(db), version)).execute(db);
  },
  replaceRunClaim: async (db, names, version) => {
    await sql.raw(`drop procedure if exists \`${mysqlRunRoutineNames(names.prefix).runClaim}\``).execute(db);
    await sql.raw(mysqlRunClaimRoutine(names, await mysqlCollation(db), version)).execute(db);
  },
  // cairn_0012_step_insert_v2 is PostgreSQL's: the procedures stay as they are.
  installStepInsertV2: async () => [],
  removeStepInsertV2: async () => [],
};
