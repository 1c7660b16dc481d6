import type { RoutineParam } from './params.js';

/** Parameters of `<prefix>slot_acquire`, in call order (the DDL of both server dialects and the call follow this list). */
export const SLOT_ACQUIRE_PARAMS = [
  ['p_key_hash', 'hash'],
  ['p_holder', 'text'],
  ['p_holder_hash', 'hash'],
  ['p_limit', 'int'],
  ['p_expires_at', 'bigint'],
  ['p_now', 'bigint'],
  ['p_wait', 'flag'], // 1: the request keeps its place in line (the three below are its `SlotWait`)
  ['p_priority', 'int'],
  ['p_queued_at', 'bigint'],
  ['p_wait_expires_at', 'bigint'],
] as const satisfies readonly RoutineParam[];

/** Parameters of `<prefix>slot_release`, in call order. */
export const SLOT_RELEASE_PARAMS = [
  ['p_key_hash', 'hash'],
  ['p_holder', 'text'],
  ['p_holder_hash', 'hash'],
  ['p_now', 'bigint'],
] as const satisfies readonly RoutineParam[];

/** The names of the slot routines of one table prefix. */
export function slotRoutineNames(prefix: string): { acquire: string; release: string } {
  return { acquire: `${prefix}slot_acquire`, release: `${prefix}slot_release` };
}
