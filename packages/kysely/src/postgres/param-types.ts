import type { RoutineParam } from '../routines/params.js';
import type { ColumnKind } from '../schema/column-types.js';

// The SQL type of each parameter kind in PostgreSQL's functions and their calls.
const PG_PARAM_TYPES: Record<ColumnKind, string> = {
  id: 'text',
  name: 'text',
  hash: 'text',
  short: 'text',
  text: 'text',
  json: 'text',
  bigint: 'bigint',
  int: 'integer',
  flag: 'smallint',
  ordered: 'text',
};

/** `p_x text, p_y bigint, ...` */
export function postgresSignature(params: readonly RoutineParam[]): string {
  return params.map(([name, kind]) => `${name} ${PG_PARAM_TYPES[kind]}`).join(', ');
}

/** `$1::text, $2::bigint, ...` — typed placeholders, so the call resolves without guessing. */
export function postgresParamTypes(params: readonly RoutineParam[]): string[] {
  return params.map(([, kind]) => PG_PARAM_TYPES[kind]);
}
