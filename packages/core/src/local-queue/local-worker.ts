import type { GroupConcurrency, Job, QueueWorker } from '../queue/queue.js';
import type { QueuedJob } from './ready-jobs.js';

/** Per-group caps resolved from `WorkOptions.groupConcurrency`. */
export interface GroupCaps {
  readonly default: number;
  readonly tiers: Readonly<Record<string, number>>;
}

/** Normalises `groupConcurrency` (already validated) to a default plus per-tier caps. */
export function toGroupCaps(groupConcurrency: GroupConcurrency | undefined): GroupCaps | undefined {
  if (groupConcurrency === undefined) return undefined;
  if (typeof groupConcurrency === 'number') return { default: groupConcurrency, tiers: {} };
  return { default: groupConcurrency.default, tiers: { ...groupConcurrency.tiers } };
}

/** What a worker needs from the queue it belongs to. */
export interface WorkerHost {
  /** Called after a job settles: the freed slot may admit a waiting job. */
  dispatch(): void;
  /** Called once when the worker stops, so it is offered no more jobs. */
  detach(worker: LocalWorker): void;
  /** Receives the error of a handler that threw; must not throw. */
  reportError(error: unknown, job: Job): void;
}

/**
 * One consumer of a local queue name. It holds the counts dispatch checks, so the caps hold by
 * construction: a job is only started after `hasCapacity()` and `canStart()` said yes, and the
 * counts change synchronously with that decision.
 */
export class LocalWorker implements QueueWorker {
  readonly #host: WorkerHost;
  readonly #handler: (job: Job) => Promise<void>;
  readonly #concurrency: number;
  readonly #caps: GroupCaps | undefined;
  #running = 0;
  readonly #groupRunning = new Map<string, number>();
  readonly #inFlight = new Set<Promise<void>>();
  #stopped = false;
  #stopping: Promise<void> | undefined;
  readonly #onStopped: (() => void) | undefined;

  /**
   * Creates a worker running at most `concurrency` jobs, and at most `caps` per group; `onStopped`
   * runs once the worker has stopped and its last job has settled.
   */
  constructor(host: WorkerHost, handler: (job: Job) => Promise<void>, concurrency: number, caps: GroupCaps | undefined, onStopped?: () => void) {
    this.#host = host;
    this.#handler = handler;
    this.#concurrency = concurrency;
    this.#caps = caps;
    this.#onStopped = onStopped;
  }

  /** True while the worker is running and below its concurrency. */
  hasCapacity(): boolean {
    return !this.#stopped && this.#running < this.#concurrency;
  }

  /** True when starting `entry` keeps its group within the cap of its tier. */
  canStart(entry: QueuedJob): boolean {
    const group = entry.job.group;
    if (group === undefined || this.#caps === undefined) return true;
    const cap = (group.tier !== undefined ? this.#caps.tiers[group.tier] : undefined) ?? this.#caps.default;
    return (this.#groupRunning.get(group.id) ?? 0) < cap;
  }

  /**
   * Runs `entry` (the caller checked `hasCapacity` and `canStart`). The handler is called on a later
   * microtask, never inside the caller's stack, so dispatch never re-enters user code. A handler that
   * throws is reported and dropped, never run again.
   */
  start(entry: QueuedJob): void {
    const groupId = entry.job.group?.id;
    this.#running++;
    if (groupId !== undefined) this.#groupRunning.set(groupId, (this.#groupRunning.get(groupId) ?? 0) + 1);
    const task: Promise<void> = Promise.resolve()
      .then(() => this.#handler(entry.job))
      .then(
        () => undefined,
        (error: unknown) => this.#host.reportError(error, entry.job),
      )
      .finally(() => {
        this.#running--;
        if (groupId !== undefined) {
          const left = (this.#groupRunning.get(groupId) ?? 1) - 1;
          // Delete rather than keep zeros, so a stream of one-off group ids does not grow the map.
          if (left === 0) this.#groupRunning.delete(groupId);
          else this.#groupRunning.set(groupId, left);
        }
        this.#inFlight.delete(task);
        this.#host.dispatch();
      });
    this.#inFlight.add(task);
  }

  /** Stops taking jobs at once; resolves when every job it started has settled. Idempotent. */
  stop(): Promise<void> {
    if (this.#stopping === undefined) {
      this.#stopped = true;
      this.#host.detach(this);
      this.#stopping = Promise.all(this.#inFlight).then(() => this.#onStopped?.());
    }
    return this.#stopping;
  }
}
