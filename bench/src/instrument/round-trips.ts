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
  /** By request kind: the SQL verb (`begin`, `select`, `insert`, ...), the Redis or MongoDB command. */
  byKind: Record<string, number>;
  /** Statements that asked for an asynchronous commit (PostgreSQL `synchronous_commit = off`). */
  asyncCommits: number;
}

export class RoundTripCounter {
  total = 0;
  asyncCommits = 0;
  readonly byMethod = new Map<string, number>();
  readonly byKind = new Map<string, number>();
  /** Store methods currently awaiting their result (a multiset, by name). */
  readonly #active = new Map<string, number>();
  #activeCount = 0;

  /**
   * One request sent to the server. `detail` is the statement text where there is one;
   * `asyncCommit` says that the request asked for `synchronous_commit = off`.
   */
  hit(detail?: string, asyncCommit = false): void {
    this.total += 1;
    if (asyncCommit) this.asyncCommits += 1;
    const kind = kindOf(detail);
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
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
    return { total: this.total, asyncCommits: this.asyncCommits, byMethod: Object.fromEntries(this.byMethod), byKind: Object.fromEntries(this.byKind) };
  }

  #owner(): string {
    if (this.#activeCount === 0) return '(outside the store)';
    if (this.#active.size === 1) return this.#active.keys().next().value as string;
    return '(concurrent store calls)';
  }
}

/** The kind of a request: the first SQL keyword (a CTE counts as what it ends with), or the command name. */
function kindOf(detail: string | undefined): string {
  if (detail === undefined) return 'call';
  const text = detail.trim().toLowerCase();
  const word = /^[a-z_]+/.exec(text)?.[0] ?? text.slice(0, 12);
  return word === 'with' ? 'with (CTE)' : word;
}

function subtract(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(after)) {
    const d = n - (before[key] ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}

/** What happened between two snapshots. */
export function diff(after: RoundTripSnapshot, before: RoundTripSnapshot): RoundTripSnapshot {
  return {
    total: after.total - before.total,
    asyncCommits: after.asyncCommits - before.asyncCommits,
    byMethod: subtract(after.byMethod, before.byMethod),
    byKind: subtract(after.byKind, before.byKind),
  };
}
