import type { RoutineCalls } from '../dialect/types.js';

/**
 * MySQL/MariaDB call a procedure as `call proc(?, ...)`; mysql2 returns a CALL's result sets
 * followed by its status packet, and the first set is the procedure's.
 */
export const mysqlRoutineCalls: RoutineCalls = {
  text: (name, params) => `call \`${name}\`(${params.map(() => '?').join(', ')})`,
  resultSet: (rows) => (Array.isArray(rows[0]) ? (rows[0] as unknown[]) : rows),
};
