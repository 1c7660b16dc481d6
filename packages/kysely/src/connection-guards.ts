/** Receives a connection error the guard kept from crashing the process. */
export type ConnectionErrorHandler = (error: unknown) => void;

// Marks a pool already guarded, so guarding twice adds no second set of listeners.
const GUARDED = Symbol.for('cairn.kysely.guarded');

/**
 * Marks `pool` as guarded; returns false when it already was (the guard must then add nothing).
 * Shared by the PostgreSQL and MySQL guards, which live in their own entry points so that a
 * project using one driver never needs the other's types.
 */
export function markGuarded(pool: object): boolean {
  const marked = pool as { [GUARDED]?: boolean };
  if (marked[GUARDED]) return false;
  marked[GUARDED] = true;
  return true;
}
