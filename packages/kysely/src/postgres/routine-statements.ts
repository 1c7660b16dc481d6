import type { RoutineStatements } from '../dialect/types.js';
import type { StepRoutineVersion } from '../routines/params.js';
import { dropPostgresRoutines, postgresRoutines } from './step-routines.js';
import type { TableNames } from '../schema/tables.js';
import { dropPostgresStepInsertV2, postgresStepInsertV2 } from './step-insert-v2-routine.js';

const replaceStep = async (names: TableNames, from: StepRoutineVersion, to: StepRoutineVersion) => [
  ...dropPostgresRoutines(names, from),
  ...postgresRoutines(names, to),
];

/** PostgreSQL's routines as migrations create, replace and drop them (PL/pgSQL functions; `step_insert_v2` since `cairn_0012_step_insert_v2`). */
export const postgresRoutineStatements: RoutineStatements = {
  install: async (_db, names) => postgresRoutines(names, '0002'),
  drop: (names) => [...dropPostgresRoutines(names, '0008'), ...dropPostgresRoutines(names, '0003'), ...dropPostgresRoutines(names, '0002')],
  replaceStep: (_db, names, from, to) => replaceStep(names, from, to),
  installFinishedStep: (_db, names) => replaceStep(names, '0003', '0008'),
  removeFinishedStep: (_db, names) => replaceStep(names, '0008', '0003'),
  // Its run writes are statements (run-statement-writes.ts): no routine to replace.
  replaceRequestCancel: async () => {},
  // The claim is a statement of the store here (cairn_0015_run_pause changes no routine).
  replaceRunClaim: async () => {},
  installStepInsertV2: async (_db, names) => postgresStepInsertV2(names),
  removeStepInsertV2: async (_db, names) => dropPostgresStepInsertV2(names),
};
