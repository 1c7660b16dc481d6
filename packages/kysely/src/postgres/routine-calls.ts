import type { RoutineCalls } from '../dialect/types.js';
import { postgresParamTypes } from './param-types.js';

/**
 * PostgreSQL calls a routine as `select * from fn($1::type, ...)` (typed placeholders, so a call
 * resolves to the one function of that argument list); the rows are the function's.
 */
export const postgresRoutineCalls: RoutineCalls = {
  text: (name, params) =>
    `select * from "${name}"(${postgresParamTypes(params)
      .map((type, i) => `$${i + 1}::${type}`)
      .join(', ')})`,
  resultSet: (rows) => rows,
};
