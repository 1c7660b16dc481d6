import type { RunRecord } from '@cairn/core';
import { type CountingStore, countingStore, type WorkflowStore } from '@cairn/core/backend';
import { nowMs } from '../stats.js';
import { diff, type RoundTripCounter, type RoundTripSnapshot } from './round-trips.js';

/** One execution of a run as seen by the store: from `runs.claim` to the `runs.transition` that ends it. */
export interface ExecutionWindow {
  runId: string;
  /** `performance.now()` when `runs.claim` was called / when the closing transition resolved. */
  startedAt: number;
  endedAt: number;
  /** Status the closing transition wrote (`waiting`, `completed`, ...). */
  status: string;
  /** Driver round trips made inside the window, by store method. */
  roundTrips: RoundTripSnapshot;
  /** Store calls made inside the window, by method. */
  storeCalls: Record<string, number>;
  /** Bytes the store handed back inside the window (JSON of every call's result), while `countBytes` is on. */
  bytesRead: number;
  /** Step records `steps.load` handed back inside the window. */
  stepsRead: number;
}

interface OpenWindow {
  bytes: number;
  steps: number;
  startedAt: number;
  rt: RoundTripSnapshot;
  calls: Record<string, number>;
}

/**
 * Wraps a store: counts every call per `noun.method`, tells the driver counter which store method
 * is in flight (so driver round trips can be attributed), and reports execution windows per run.
 * Scenarios run one execution at a time when they read windows, so attribution is exact there.
 */
export class StoreProbe {
  readonly store: WorkflowStore;
  /** Total milliseconds spent awaiting each store method (client side, including the driver). */
  readonly callMs = new Map<string, number>();
  readonly #counting: CountingStore;
  readonly #open = new Map<string, OpenWindow>();
  readonly #waiters = new Map<string, { since: number; resolve: (w: ExecutionWindow) => void }[]>();
  readonly #closed = new Map<string, ExecutionWindow[]>();
  /** First `runs.claim` call per run (for queue waits), and when each run reached a terminal status. */
  readonly firstClaimAt = new Map<string, number>();
  readonly finishedAt = new Map<string, number>();
  /** Record first-claim / finish times only while true (the fairness and latency scenarios). */
  trackRuns = false;
  /**
   * Measure the bytes each call hands back (its result as JSON) while true (the wake scenario): a
   * store-independent figure of what an execution reads, at the price of a stringify per call.
   */
  countBytes = false;
  #bytes = 0;
  #steps = 0;

  constructor(
    inner: WorkflowStore,
    readonly counter: RoundTripCounter,
  ) {
    this.#counting = countingStore(inner, {
      // The engine over the probe polls and never asks the store's doctor: signals would add
      // listening requests to every count (the dispatch scenario uses them through its own peer).
      without: ['signals', 'doctor'],
      // A full run makes millions of calls; the windows need only the tally per method.
      history: false,
      around: (call, forward, args) => this.#call(call.method, () => forward(...args), args),
    });
    this.store = this.#counting;
  }

  /** How many times `noun.method` was called since the probe was made. */
  count(method: string): number {
    return this.#counting.count(method);
  }

  callSnapshot(): Record<string, number> {
    return this.#counting.counts();
  }

  timeSnapshot(): Record<string, number> {
    return Object.fromEntries(this.callMs);
  }

  /**
   * Resolves with the first execution window of `runId` that started at or after `since`
   * (a `performance.now()` time taken before the run was started or woken), already closed or not.
   */
  execution(runId: string, since: number): Promise<ExecutionWindow> {
    const done = this.#closed.get(runId)?.find((w) => w.startedAt >= since);
    if (done) return Promise.resolve(done);
    return new Promise((resolve) => {
      const list = this.#waiters.get(runId) ?? [];
      list.push({ since, resolve });
      this.#waiters.set(runId, list);
    });
  }

  /** Forgets closed windows and run timings (between scenarios). */
  forget(): void {
    this.#closed.clear();
    this.firstClaimAt.clear();
    this.finishedAt.clear();
  }

  async #call(method: string, fn: () => Promise<unknown>, args: unknown[]): Promise<unknown> {
    const runId = typeof args[0] === 'string' ? args[0] : undefined;
    if (method === 'runs.claim' && runId !== undefined) {
      // The claim itself belongs to the window: the counting store has counted it already, so the
      // opening snapshot leaves it out.
      const t = nowMs();
      if (this.trackRuns && !this.firstClaimAt.has(runId)) this.firstClaimAt.set(runId, t);
      const calls = this.callSnapshot();
      calls['runs.claim'] = (calls['runs.claim'] ?? 1) - 1;
      this.#open.set(runId, { startedAt: t, rt: this.counter.snapshot(), calls, bytes: this.#bytes, steps: this.#steps });
    }
    this.counter.enter(method);
    let result: unknown;
    const t0 = nowMs();
    try {
      result = await fn();
    } finally {
      this.counter.leave(method);
      this.callMs.set(method, (this.callMs.get(method) ?? 0) + (nowMs() - t0));
    }
    if (this.countBytes && result !== undefined) this.#bytes += JSON.stringify(result).length;
    if (method === 'steps.load' && Array.isArray(result)) this.#steps += result.length;
    if (runId !== undefined) {
      if (method === 'runs.claim' && result === undefined) this.#open.delete(runId);
      if (method === 'runs.transition') this.#close(runId, result as RunRecord);
    }
    return result;
  }

  #close(runId: string, run: RunRecord): void {
    const endedAt = nowMs();
    if (this.trackRuns && (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled')) this.finishedAt.set(runId, endedAt);
    const open = this.#open.get(runId);
    if (!open) return;
    this.#open.delete(runId);
    const now = this.callSnapshot();
    const storeCalls: Record<string, number> = {};
    for (const [m, n] of Object.entries(now)) {
      const d = n - (open.calls[m] ?? 0);
      if (d !== 0) storeCalls[m] = d;
    }
    const window: ExecutionWindow = {
      runId,
      startedAt: open.startedAt,
      endedAt,
      status: run.status,
      roundTrips: diff(this.counter.snapshot(), open.rt),
      storeCalls,
      bytesRead: this.#bytes - open.bytes,
      stepsRead: this.#steps - open.steps,
    };
    const closed = this.#closed.get(runId) ?? [];
    closed.push(window);
    this.#closed.set(runId, closed);
    const waiters = this.#waiters.get(runId);
    if (waiters) {
      const keep = waiters.filter((w) => {
        if (window.startedAt < w.since) return true;
        w.resolve(window);
        return false;
      });
      if (keep.length > 0) this.#waiters.set(runId, keep);
      else this.#waiters.delete(runId);
    }
  }
}

/** Total store calls in a per-method record. */
export function totalCalls(calls: Record<string, number>): number {
  return Object.values(calls).reduce((a, b) => a + b, 0);
}
