import type { Job } from '../queue/queue.js';
import type { LocalWorker, WorkerHost } from './local-worker.js';
import { ReadyJobs, type QueuedJob } from './ready-jobs.js';

/**
 * The state of one queue name inside a local queue: its ready jobs, its workers and its live dedupe
 * keys. Every worker on the name draws from the same ready jobs, so they share the work.
 */
export class QueueChannel implements WorkerHost {
  /** The queue name. */
  readonly name: string;
  readonly #ready = new ReadyJobs();
  #workers: LocalWorker[] = [];
  #nextWorker = 0;
  // Dedupe keys of jobs accepted but not yet started (ready or still delayed).
  readonly #dedupe = new Set<string>();
  readonly #onError: (error: unknown, job: Job) => void;

  /** Creates the channel of `name`; `onError` receives handler failures. */
  constructor(name: string, onError: (error: unknown, job: Job) => void) {
    this.name = name;
    this.#onError = onError;
  }

  /**
   * Reserves `key` for a new job. False when a job with that key is queued and not yet started, in
   * which case the caller must not enqueue.
   */
  claimDedupeKey(key: string): boolean {
    if (this.#dedupe.has(key)) return false;
    this.#dedupe.add(key);
    return true;
  }

  /** Makes `entry` ready and offers it to the workers at once. */
  enqueue(entry: QueuedJob): void {
    this.#ready.push(entry);
    this.dispatch();
  }

  /** Adds a worker and hands it whatever is already waiting. */
  attach(worker: LocalWorker): void {
    this.#workers.push(worker);
    this.dispatch();
  }

  /** Removes a stopping worker: it is offered no more jobs. */
  detach(worker: LocalWorker): void {
    this.#workers = this.#workers.filter((w) => w !== worker);
  }

  /** Forwards a handler's failure to the queue's `onError`, swallowing what that hook throws. */
  reportError(error: unknown, job: Job): void {
    try {
      this.#onError(error, job);
    } catch {
      // A failing error hook must not take the worker down with it; the job is dropped either way.
    }
  }

  /**
   * Starts ready jobs while some worker has a free slot and some job fits its group caps. Workers are
   * served one job at a time in rotation, so jobs spread over every worker on the name rather than
   * filling the first one. Synchronous and free of user code (handlers start on a later microtask).
   */
  dispatch(): void {
    while (this.#ready.size > 0) {
      const workers = this.#workers;
      let started = false;
      for (let i = 0; i < workers.length; i++) {
        const worker = workers[(this.#nextWorker + i) % workers.length]!;
        if (!worker.hasCapacity()) continue;
        const entry = this.#ready.take((candidate) => worker.canStart(candidate));
        if (entry === undefined) continue;
        // The job has started: from now on a send with the same key enqueues a new job.
        if (entry.dedupeKey !== undefined) this.#dedupe.delete(entry.dedupeKey);
        worker.start(entry);
        started = true;
      }
      if (!started) return;
      this.#nextWorker = workers.length === 0 ? 0 : (this.#nextWorker + 1) % workers.length;
    }
  }

  /** Drops every job not yet started and forgets their dedupe keys. */
  discard(): void {
    this.#ready.clear();
    this.#dedupe.clear();
  }
}
