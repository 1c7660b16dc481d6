import type { RoutineStatements } from '../dialect/types.js';
import { dropPostgresRoutines, postgresRoutines } from '../routines/postgres-routines.js';

/** PostgreSQL's routines as migrations create, replace and drop them (PL/pgSQL functions). */
export const postgresRoutineStatements: RoutineStatements = {
  install: async (_db, names) => postgresRoutines(names, '0002'),
  drop: (names) => [...dropPostgresRoutines(names, '0008'), ...dropPostgresRoutines(names, '0003'), ...dropPostgresRoutines(names, '0002')],
  replaceStep: async (_db, names, from, to) => [...dropPostgresRoutines(names, from), ...postgresRoutines(names, to)],
};
