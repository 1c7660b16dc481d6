/**
 * Slots: the one store primitive behind concurrency limits and rate limits (docs/flow-control.md).
 *
 * A key (`SlotRequest.key`) has `limit` slots. A holder takes one until `expiresAt`; a slot whose
 * `expiresAt <= now` is free again without anyone releasing it, so a holder that died frees its
 * slot when its lease would have ended.
 *
 * - A concurrency limit holds a slot per executing run (holder = the run id, `expiresAt` = the
 *   run's lease) and releases it when the run stops executing.
 * - A rate limit takes a slot per start or per call and never releases it (`expiresAt` = now +
 *   the period): with `limit` slots, at most `limit` takes fall in any window of one period.
 */

/** Where a refused request queues, and its place in line. */
export interface SlotWait {
  /** Higher goes first. An integer from -1000 to 1000. */
  priority: number;
  /** Among equal priorities, earlier goes first (epoch ms; the run's `createdAt` for runs). */
  queuedAt: number;
  /**
   * The waiter entry lapses at this time unless the holder asks again (a waiter that died must not
   * block the line for ever). Epoch ms, later than `now`.
   */
  expiresAt: number;
}

/** One `SlotStore.acquire` request. */
export interface SlotRequest {
  /** What is limited; the engine namespaces it (`c:` concurrency, `r:` start rate, `s:` step rate). At most 512 characters. */
  key: string;
  /** How many slots `key` has: an integer from 1 to 10,000. Callers use one limit per key. */
  limit: number;
  /** Who takes the slot: a run id, or a unique id per take for rate limits. At most 512 characters. */
  holder: string;
  /** When the slot frees itself unless renewed or released (epoch ms). */
  expiresAt: number;
  /**
   * Present: the request keeps its place in line. It is granted only when the free slots
   * outnumber the unexpired waiters ahead of it (ordered by `priority` desc, `queuedAt` asc,
   * `holder` asc), and a refusal records (or refreshes) the holder as a waiter. Absent: granted
   * whenever a slot is free, and a refusal records nothing.
   */
  wait?: SlotWait;
}

/** The answer to `SlotStore.acquire`. */
export type SlotGrant =
  | { acquired: true }
  | {
      acquired: false;
      /** The earliest `expiresAt` among the slots held now, when all are held: no slot frees itself sooner. */
      freeAt?: number;
    };

/** The holders and waiters of one key, for operators (`SlotStore.inspect`). */
export interface SlotSnapshot {
  holders: { holder: string; expiresAt: number }[];
  waiters: { holder: string; priority: number; queuedAt: number; expiresAt: number }[];
}
