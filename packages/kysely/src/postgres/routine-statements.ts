import type { RoutineStatements } from '../dialect/types.js';
import type { StepRoutineVersion } from '../routines/params.js';
import { dropPostgresRoutines, postgresRoutines } from '../routines/postgres-routines.js';
import type { TableNames } from '../schema/tables.js';

const replaceStep = async (names: TableNames, from: StepRoutineVersion, to: StepRoutineVersion) => [
  ...dropPostgresRoutines(names, from),
  ...postgresRoutines(names, to),
];

/** PostgreSQL's routines as migrations create, replace and drop them (PL/pgSQL functions). */
export const postgresRoutineStatements: RoutineStatements = {
  install: async (_db, names) => postgresRoutines(names, '0002'),
  drop: (names) => [...dropPostgresRoutines(names, '0008'), ...dropPostgresRoutines(names, '0003'), ...dropPostgresRoutines(names, '0002')],
  replaceStep: (_db, names, from, to) => replaceStep(names, from, to),
  installFinishedStep: (_db, names) => replaceStep(names, '0003', '0008'),
  removeFinishedStep: (_db, names) => replaceStep(names, '0008', '0003'),
  // Its run writes are statements (run-statement-writes.ts): no routine to replace.
  replaceRequestCancel: async () => {},
};
