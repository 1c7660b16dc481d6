/**
 * Round trips counted at the driver. Every backend adapter calls `hit()` once per request its
 * driver sends to the server (a pg `query`, a mysql2 `query`/`execute`, a better-sqlite3
 * statement execution, an ioredis command, a MongoDB command). Each hit is attributed to the
 * store method in flight at that moment (see `counting-store.ts`), so a scenario can say not only
 * how many round trips a replay made but which of them read the steps.
 */

/** A snapshot of the counters: totals and per store method (`steps.load`, ...). */
export interface RoundTripSnapshot {
  total: number;
  byMethod: Record<string, number>;
  /** Statements that asked for an asynchronous commit (PostgreSQL `synchronous_commit = off`). */
  asyncCommits: number;
}

export class RoundTripCounter {
  total = 0;
  asyncCommits = 0;
  readonly byMethod = new Map<string, number>();
  /** Store methods currently awaiting their result (a multiset, by name). */
  readonly #active = new Map<string, number>();
  #activeCount = 0;

  /** One request sent to the server. `detail` is the statement text where there is one. */
  hit(detail?: string): void {
    this.total += 1;
    if (detail !== undefined && /synchronous_commit/i.test(detail) && /\boff\b/i.test(detail)) this.asyncCommits += 1;
    const owner = this.#owner();
    this.byMethod.set(owner, (this.byMethod.get(owner) ?? 0) + 1);
  }

  /** Called by the counting store when a store method starts / settles. */
  enter(method: string): void {
    this.#active.set(method, (this.#active.get(method) ?? 0) + 1);
    this.#activeCount += 1;
  }

  leave(method: string): void {
    const n = (this.#active.get(method) ?? 0) - 1;
    if (n <= 0) this.#active.delete(method);
    else this.#active.set(method, n);
    this.#activeCount -= 1;
  }

  snapshot(): RoundTripSnapshot {
    return { total: this.total, asyncCommits: this.asyncCommits, byMethod: Object.fromEntries(this.byMethod) };
  }

  #owner(): string {
    if (this.#activeCount === 0) return '(outside the store)';
    if (this.#active.size === 1) return this.#active.keys().next().value as string;
    return '(concurrent store calls)';
  }
}

/** What happened between two snapshots. */
export function diff(after: RoundTripSnapshot, before: RoundTripSnapshot): RoundTripSnapshot {
  const byMethod: Record<string, number> = {};
  for (const [method, n] of Object.entries(after.byMethod)) {
    const d = n - (before.byMethod[method] ?? 0);
    if (d !== 0) byMethod[method] = d;
  }
  return { total: after.total - before.total, asyncCommits: after.asyncCommits - before.asyncCommits, byMethod };
}
