import { Worker as BullWorker, type Job as BullJob, type JobJson, type Processor, type WorkerOptions } from 'bullmq';

/** Counts how many of `keys` exist (Redis `EXISTS`), on a command connection. */
export type CountKeys = (keys: string[]) => Promise<number>;

/**
 * A BullMQ `Worker` whose Redis fetches follow the jobs, not the number of worker processes
 * (decision 46). BullMQ's own loop runs unchanged — lock renewal, the stalled-job check, delays,
 * retries on connection errors, `close()` waiting for running jobs — with three of its fetches
 * left out or made cheap:
 *
 * - *The look after a take.* BullMQ fetches again at once after every job it takes, to drain a
 *   backlog. The fetch that took the job already put the queue's marker back, so the next
 *   blocking wait on the marker returns at once while jobs remain; that look is skipped, and the
 *   marker wakes one waiter instead (this worker's wait, or another process's).
 * - *The fetch on completion while a slot is free.* A worker with a free slot is, or is about to
 *   be, blocked on the marker, which any waiting job keeps set: only a completion that frees this
 *   worker's last busy slot (every slot held) also fetches the next job.
 * - *A fetch when no job is there.* A wake (the marker, or a wait that ran out) first asks with
 *   one `EXISTS` whether the queue's wait list, prioritized set or delayed set holds anything; if
 *   none does, it waits on the marker again instead of running BullMQ's fetch script (seven
 *   commands). The marker a take leaves wakes an idle worker in another process; that wake now
 *   costs one command.
 *
 * None changes which job runs or when it may run; each only saves a fetch that, with workers
 * idle in several processes, finds nothing. Built from BullMQ's protected hooks and its public
 * key names, the same in every BullMQ the peer range admits (5.72 and 6). Construct with
 * `autorun: false` and call `run()`: the fields below exist only once the constructor returned.
 */
export class LeanFetchWorker extends BullWorker {
  // Jobs fetched by this worker and not yet completed or failed, by id.
  readonly #held = new Set<string>();
  // A fetch took a job and no blocking wait has begun since: the next immediate fetch is skipped.
  #tookSinceWait = false;
  // The due time of the earliest delayed job this worker learnt of. BullMQ forgets it when a fetch
  // takes a job (and re-learns it from the look after the take, which is skipped here).
  #delayedDueAt = 0;
  readonly #countKeys: CountKeys;

  /** As BullMQ's `Worker`, with `countKeys` for the probe before each fetch (a command connection). */
  constructor(name: string, processor: Processor, opts: WorkerOptions, countKeys: CountKeys) {
    super(name, processor, opts);
    this.#countKeys = countKeys;
  }

  // BullMQ 6 calls this with (token, name), BullMQ 5 with (client, token, name): every argument
  // is handed on as received.
  protected override moveToActive(...args: [token: string, name?: string]): Promise<BullJob> {
    if (this.#tookSinceWait) {
      this.#tookSinceWait = false;
      // As an empty fetch would: BullMQ marks itself drained and waits on the marker next.
      return this.nextJobFromJobData(undefined, undefined, undefined);
    }
    return this.#fetchIfAnyJob(args);
  }

  async #fetchIfAnyJob(args: unknown[]): Promise<BullJob> {
    let present = 1;
    try {
      present = await this.#countKeys([this.keys.wait!, this.keys.prioritized!, this.keys.delayed!]);
    } catch {
      // The fetch then runs, and BullMQ handles its error as it always has.
    }
    if (present === 0) return this.nextJobFromJobData(undefined, undefined, undefined);
    return (super.moveToActive as (...all: unknown[]) => Promise<BullJob>).apply(this, args);
  }

  protected override getBlockTimeout(blockUntil: number): number {
    this.#tookSinceWait = false;
    // BullMQ's own due time when it has one; else the one it forgot when a fetch took a job.
    const due = blockUntil > 0 ? blockUntil : this.#delayedDueAt;
    this.#delayedDueAt = due > Date.now() ? due : 0;
    return super.getBlockTimeout(due);
  }

  protected override async nextJobFromJobData(jobData?: JobJson, jobId?: string, token?: string): Promise<BullJob> {
    const job = await super.nextJobFromJobData(jobData, jobId, token);
    if (job) {
      this.#held.add(String(job.id));
      this.#tookSinceWait = true;
    }
    return job;
  }

  protected override handleCompleted(...args: Parameters<BullWorker['handleCompleted']>): ReturnType<BullWorker['handleCompleted']> {
    const [result, job, token, fetchNext, span] = args;
    return super.handleCompleted(result, job, token, this.#fetchOnRelease(job, fetchNext), span);
  }

  protected override handleFailed(...args: Parameters<BullWorker['handleFailed']>): ReturnType<BullWorker['handleFailed']> {
    const [error, job, token, fetchNext, span] = args;
    return super.handleFailed(error, job, token, this.#fetchOnRelease(job, fetchNext), span);
  }

  // Decided before the job is released: only a worker whose every slot was held fetches on
  // completion. Releasing twice (BullMQ retries a completion after a connection error) is harmless.
  #fetchOnRelease(job: BullJob, fetchNext: (() => boolean) | undefined): () => boolean {
    const everySlotHeld = this.#held.size >= this.concurrency;
    this.#held.delete(String(job.id));
    return () => everySlotHeld && (fetchNext?.() ?? true);
  }
}
