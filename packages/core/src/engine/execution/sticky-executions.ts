import type { RunRecord } from '../../model/run.js';
/** What the cache needs of an execution (`Execution` has it); no import of the execution, which imports the runtime. */
export interface KeepableExecution {
  /** True when it suspended in a state it can resume from. */
  keepable(): boolean;
  /** Calls it made: its share of `maxCalls`. */
  readonly calls: number;
  /** The fence of the claim it last ran under. */
  readonly fence: number;
  /** Ends it for good. */
  discard(): void;
}

/**
 * `createEngine({ stickyExecutions })`: suspended executions this process keeps, so that the next
 * wake of their run resumes one where it stopped instead of reading and replaying its whole
 * history (decision 64). Bounded by count and by the calls they hold; `false` turns it off.
 */
export interface StickyExecutionOptions {
  /** Suspended executions kept at most (default 1,000); past it the least recently suspended is dropped. */
  maxExecutions?: number;
  /**
   * Calls (recorded steps and the rest) of every kept execution together at most (default
   * 200,000): what bounds the memory they hold, since an execution keeps a record per step it
   * made. An execution holding more than this alone is never kept.
   */
  maxCalls?: number;
  /**
   * Consulted each time an execution would be kept and each time one would be resumed: true drops
   * it (the run is replayed instead). For tests that force evictions at random; default never.
   */
  evict?: (runId: string) => boolean;
}

interface Kept<E> {
  execution: E;
  /** Its calls when kept (what it counts against `maxCalls`). */
  calls: number;
}

/**
 * The suspended executions this engine keeps, least recently suspended first. An execution is
 * resumed only by the claim right after the one it suspended under (fence + 1): any claim between
 * them (another worker's, a lost lease, a wait for a slot) may have written the run's steps, so the
 * run is replayed from its history then, as every run was before.
 */
export class StickyExecutions<E extends KeepableExecution = KeepableExecution> {
  private readonly kept = new Map<string, Kept<E>>();
  private held = 0;
  private readonly maxExecutions: number;
  private readonly maxCalls: number;
  private readonly evict: (runId: string) => boolean;

  constructor(options: StickyExecutionOptions) {
    this.maxExecutions = options.maxExecutions ?? 1000;
    this.maxCalls = options.maxCalls ?? 200_000;
    this.evict = options.evict ?? (() => false);
  }

  /** Executions kept now. */
  get size(): number {
    return this.kept.size;
  }

  /** Calls the kept executions hold together (at most `maxCalls`). */
  get calls(): number {
    return this.held;
  }

  /**
   * Keeps `execution`, which just suspended under `runId`'s claim and whose suspension is recorded,
   * if it can be resumed and fits; else it is discarded. Drops the oldest kept ones past the bounds.
   */
  keep(runId: string, execution: E): void {
    this.drop(runId);
    const calls = execution.calls;
    if (!execution.keepable() || calls > this.maxCalls || this.evict(runId)) {
      execution.discard();
      return;
    }
    this.kept.set(runId, { execution, calls });
    this.held += calls;
    for (const [oldest] of this.kept) {
      if (this.kept.size <= this.maxExecutions && this.held <= this.maxCalls) break;
      this.drop(oldest);
    }
  }

  /**
   * The kept execution of `run` (just claimed), taken out of the cache, when it may resume under
   * this claim: the claim is the one right after its own, and the run is neither being cancelled
   * nor past its deadline at `now` (those end through a replay). Otherwise it is discarded.
   */
  take(run: RunRecord, now: number): E | undefined {
    const entry = this.kept.get(run.id);
    if (entry === undefined) return undefined;
    this.kept.delete(run.id);
    this.held -= entry.calls;
    const { execution } = entry;
    const next = run.fence === execution.fence + 1;
    const ending = run.cancelRequested || (run.deadline !== undefined && run.deadline <= now);
    if (!next || ending || this.evict(run.id)) {
      execution.discard();
      return undefined;
    }
    return execution;
  }

  /** Discards the kept execution of `runId`, if any. */
  drop(runId: string): void {
    const entry = this.kept.get(runId);
    if (entry === undefined) return;
    this.kept.delete(runId);
    this.held -= entry.calls;
    entry.execution.discard();
  }

  /** Discards every kept execution (the engine stops). */
  clear(): void {
    for (const runId of [...this.kept.keys()]) this.drop(runId);
  }
}
