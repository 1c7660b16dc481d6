import type { RoutineStatements } from '../dialect/types.js';
import { dropMysqlRoutines, dropMysqlStepRoutines, mysqlRoutines, mysqlStepRoutines } from '../routines/mysql-routines.js';
import { mysqlCollation } from './collation.js';

/**
 * MySQL/MariaDB's procedures as migrations create, replace and drop them; their text parameters
 * carry the tables' collation, read from the server.
 */
export const mysqlRoutineStatements: RoutineStatements = {
  install: async (db, names) => mysqlRoutines(names, await mysqlCollation(db), '0002'),
  drop: dropMysqlRoutines,
  replaceStep: async (db, names, _from, to) => [...dropMysqlStepRoutines(names), ...mysqlStepRoutines(names, await mysqlCollation(db), to)],
};
