import type { RoutineParam } from '../routines/params.js';

type ParamName<P extends readonly RoutineParam[]> = P[number][0];

/** The arguments of a routine call, by parameter name, in their stored forms. */
export type RoutineArgs<P extends readonly RoutineParam[]> = Record<ParamName<P>, string | number | null>;

/** The arguments in call order. */
export function orderedArgs<P extends readonly RoutineParam[]>(params: P, args: RoutineArgs<P>): (string | number | null)[] {
  return params.map(([name]) => args[name as ParamName<P>]);
}
