import { CairnError, type Json } from '@cairn/core';
import {
  assertQueueOpen,
  callDriver,
  createOutageLog,
  reportSafely,
  toJsonRoundTrip,
  type OutageLog,
  type Job,
  type Queue,
  type QueueCapabilities,
  type QueueWorker,
  type SendOptions,
  type WorkOptions,
} from '@cairn/core/backend';
import { Queue as BullQueue, type Worker as BullWorker, type Job as BullJob, type JobsOptions, type KeepJobs } from 'bullmq';
import { resolveConnection, type BullMQConnection, type ResolvedConnection } from './connection.js';
import { LeanFetchWorker } from './lean-fetch-worker.js';
import { checkBullMQSendOptions, checkBullMQWorkOptions, checkQueueName } from './send-options.js';
import { checkTimerOption } from './timer-options.js';

/** Options of `createBullMQQueue`. */
export interface BullMQQueueOptions {
  /**
   * An ioredis client you own, or ioredis options. A client is shared by every BullMQ `Queue` the
   * adapter creates and never closed by it; workers connect with the same settings (BullMQ opens
   * a command and a blocking connection per worker and closes them). With options, the adapter opens
   * one client for sends and closes it on `close()`. An ioredis `keyPrefix` is refused: use `prefix`.
   */
  connection: BullMQConnection;
  /** BullMQ key prefix (default `bull`), given to every `Queue` and `Worker` the adapter creates. */
  prefix?: string;
  /** The queue's `name` (default `'bullmq'`), shown in engine errors. */
  name?: string;
  /**
   * How many times a job whose worker died (its lock expired) is moved back to wait by BullMQ's
   * stalled-job check (`maxStalledCount`). Default 5. Past it BullMQ fails the job and the engine's
   * recovery loop re-dispatches what it still owes. 0 leaves redelivery to the engine alone.
   */
  redeliveryLimit?: number;
  /**
   * How long a worker's lock on a job lasts without renewal (default 30 000). A live worker renews
   * it every half of this; a dead one's job is redelivered after the lock expires and a stalled
   * check runs. At most 2^31-1 ms (a Node.js timer's limit), else `INVALID_INPUT`.
   */
  lockDurationMs?: number;
  /** How often each worker runs the stalled-job check (default 30 000; at most 2^31-1, as any timer). */
  stalledIntervalMs?: number;
  /**
   * What BullMQ keeps of failed jobs (default the latest 1000, for inspection). Completed jobs are
   * removed at once: Cairn keeps results in its store.
   */
  removeOnFail?: boolean | number | KeepJobs;
  /**
   * Receives every error: a handler that threw or a job BullMQ failed (with the job), and errors of
   * the BullMQ objects themselves (without one). Default: job failures are ignored (the engine
   * records them) and the others are written to `console.error` once per cause while they last
   * (during a Redis outage BullMQ reports every failed command and reconnection), with one line
   * when Redis answers again. A hook of your own receives each error.
   */
  onError?: (error: unknown, job?: Job) => void;
}

const CAPABILITIES: QueueCapabilities = Object.freeze({
  groups: false,
  delay: true,
  priority: true,
  dedupe: true,
  distributed: true,
});

// Every job carries the same name; BullMQ only uses it for display.
const JOB_NAME = 'cairn';

/**
 * Creates a Cairn queue over BullMQ (Redis). BullMQ workers block on Redis for the next job, so an
 * idle queue costs no polling, which suits the `per-workflow` strategy. Job groups are a BullMQ
 * Pro feature: `capabilities.groups` is false, sends with a `group` and workers with
 * `groupConcurrency` are refused with `QUEUE_UNSUPPORTED`, and the engine refuses `shared-groups`.
 *
 * - `send`: `delayMs` → `delay` (rounded up to whole ms); `priority` (higher runs sooner) →
 *   BullMQ `priority` = 1 048 576 − priority (1 runs first), so every job is prioritized and
 *   Cairn's default 0 sits mid-range; `dedupeKey` → `deduplication: { id, keepLastIfActive }`: a
 *   second send while the first job waits is a no-op, and a send while it runs is held by BullMQ
 *   and enqueued as soon as that job finishes. Payloads are JSON (BullMQ stores `JSON.stringify`).
 * - `work`: `concurrency` → BullMQ `concurrency`. One `Worker` per call, with the adapter's
 *   connection settings and prefix.
 * - Queue-level retries are off (`attempts: 1`): a handler that throws fails its job. A job whose
 *   worker died is moved back to wait by the stalled check (up to `redeliveryLimit` times).
 * - One BullMQ `Queue` object per queue name, created on first send and reused.
 */
export function createBullMQQueue(options: BullMQQueueOptions): Queue {
  return new BullMQQueue(options);
}

class BullMQQueue implements Queue {
  readonly name: string;
  readonly capabilities = CAPABILITIES;
  readonly #connection: ResolvedConnection;
  readonly #prefix: string | undefined;
  readonly #redeliveryLimit: number;
  readonly #lockDurationMs: number;
  readonly #stalledIntervalMs: number;
  readonly #removeOnFail: boolean | number | KeepJobs;
  readonly #onError: (error: unknown, job?: Job) => void;
  readonly #outage: OutageLog | undefined;
  readonly #queues = new Map<string, BullQueue>();
  readonly #workers = new Set<BullMQWorker>();
  #closing: Promise<void> | undefined;

  constructor(options: BullMQQueueOptions) {
    this.name = options?.name ?? 'bullmq';
    this.#connection = resolveConnection(options?.connection);
    this.#prefix = options.prefix;
    if (this.#prefix !== undefined && (typeof this.#prefix !== 'string' || this.#prefix === '')) {
      throw new CairnError('INVALID_INPUT', 'createBullMQQueue: prefix must be a non-empty string');
    }
    this.#redeliveryLimit = options.redeliveryLimit ?? 5;
    if (!Number.isInteger(this.#redeliveryLimit) || this.#redeliveryLimit < 0) {
      throw new CairnError('INVALID_INPUT', `redeliveryLimit must be an integer ≥ 0, got ${String(options.redeliveryLimit)}`);
    }
    this.#lockDurationMs = checkTimerOption(options.lockDurationMs, 'lockDurationMs', 30_000);
    this.#stalledIntervalMs = checkTimerOption(options.stalledIntervalMs, 'stalledIntervalMs', 30_000);
    this.#removeOnFail = options.removeOnFail ?? { count: 1000 };
    // BullMQ emits an error for every failed command and reconnection of every worker while Redis
    // is down: the default output prints each cause once, and one line when Redis answers again.
    const outage =
      options.onError === undefined
        ? createOutageLog('[cairn/queue-bullmq]', (line, error) => console.error(line, ...(error === undefined ? [] : [error])))
        : undefined;
    this.#outage = outage;
    this.#onError =
      options.onError ??
      ((error, job) => {
        if (job === undefined) outage?.report(error, 'BullMQ error');
      });
  }

  async send(queue: string, payload: Json, options: SendOptions = {}): Promise<void> {
    this.#assertOpen('send');
    checkQueueName(queue);
    const checked = checkBullMQSendOptions(options);
    // A fresh copy: refuses what is not JSON before anything reaches Redis, and a caller mutating
    // its payload while the add is in flight cannot change the job.
    const { value } = toJsonRoundTrip(payload, { what: `payload of a job for queue "${queue}"` });
    const jobOptions: JobsOptions = {
      attempts: 1,
      priority: checked.bullPriority,
      removeOnComplete: true,
      removeOnFail: this.#removeOnFail,
    };
    if (checked.delayMs > 0) jobOptions.delay = checked.delayMs;
    if (checked.dedupeKey !== undefined) {
      // Not `jobId`: a job id blocks re-adding while the job is active (and after, unless removed),
      // which would drop a wake-up sent while a run executes. keepLastIfActive instead holds such a
      // send and enqueues it when the running job finishes.
      jobOptions.deduplication = { id: checked.dedupeKey, keepLastIfActive: true };
    }
    await this.#call(`send to ${queue}`, () => this.#queue(queue).add(JOB_NAME, value, jobOptions));
  }

  async work(queue: string, handler: (job: Job) => Promise<void>, options: WorkOptions = {}): Promise<QueueWorker> {
    this.#assertOpen('work');
    checkQueueName(queue);
    if (typeof handler !== 'function') throw new CairnError('INVALID_INPUT', 'work() needs a handler function');
    const concurrency = checkBullMQWorkOptions(options);
    const bullWorker = new LeanFetchWorker(
      queue,
      async (bullJob: BullJob) => {
        // A job fetched: Redis answers again.
        this.#outage?.recovered();
        await handler(toCairnJob(queue, bullJob));
      },
      {
        connection: this.#connection.worker,
        ...(this.#prefix === undefined ? {} : { prefix: this.#prefix }),
        concurrency,
        maxStalledCount: this.#redeliveryLimit,
        lockDuration: this.#lockDurationMs,
        stalledInterval: this.#stalledIntervalMs,
        removeOnComplete: { count: 0 },
        // Started below, once the subclass is fully constructed.
        autorun: false,
      },
      (keys) => this.#connection.queue().exists(...keys),
    );
    bullWorker.on('failed', (bullJob, error) => this.#report(error, bullJob === undefined ? undefined : toCairnJob(queue, bullJob)));
    // An EventEmitter without an `error` listener throws from emit(), which would take the process
    // down on a transient connection error.
    bullWorker.on('error', (error) => this.#report(error));
    const worker = new BullMQWorker(queue, bullWorker, () => this.#workers.delete(worker));
    this.#workers.add(worker);
    // As BullMQ's `autorun` does: a loop that stops on an error reports it.
    bullWorker.run().catch((error: unknown) => this.#report(error));
    try {
      await bullWorker.waitUntilReady();
    } catch (error) {
      await worker.stop().catch(() => undefined);
      throw new CairnError('QUEUE_ERROR', `BullMQ worker on ${queue} could not connect: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    return worker;
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const results = await Promise.allSettled([...Array.from(this.#workers, (worker) => worker.stop())]);
    results.push(...(await Promise.allSettled(Array.from(this.#queues.values(), (queue) => queue.close()))));
    this.#queues.clear();
    results.push(...(await Promise.allSettled([this.#connection.close()])));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw new CairnError('QUEUE_ERROR', 'BullMQ close failed', { cause: failed.reason });
  }

  // One BullMQ Queue per name for the adapter's lifetime: creating one costs a connection check.
  #queue(queue: string): BullQueue {
    let bullQueue = this.#queues.get(queue);
    if (bullQueue === undefined) {
      bullQueue = new BullQueue(queue, {
        connection: this.#connection.queue(),
        ...(this.#prefix === undefined ? {} : { prefix: this.#prefix }),
      });
      bullQueue.on('error', (error) => this.#report(error));
      this.#queues.set(queue, bullQueue);
    }
    return bullQueue;
  }

  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const result = await callDriver('QUEUE_ERROR', `BullMQ ${what}`, fn);
    this.#outage?.recovered();
    return result;
  }

  #report(error: unknown, job?: Job): void {
    reportSafely(this.#onError, error, job);
  }

  #assertOpen(operation: string): void {
    assertQueueOpen(this.#closing, 'BullMQ', this.name, operation);
  }
}

function toCairnJob(queue: string, bullJob: BullJob): Job {
  return { id: String(bullJob.id), queue, payload: bullJob.data as Json };
}

/** One BullMQ `Worker`; stopping it waits for its running jobs (BullMQ `close()`). */
class BullMQWorker implements QueueWorker {
  readonly #queue: string;
  readonly #worker: BullWorker;
  readonly #onStopped: () => void;
  #stopping: Promise<void> | undefined;

  constructor(queue: string, worker: BullWorker, onStopped: () => void) {
    this.#queue = queue;
    this.#worker = worker;
    this.#onStopped = onStopped;
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      try {
        await this.#worker.close();
      } catch (error) {
        throw new CairnError('QUEUE_ERROR', `BullMQ worker on ${this.#queue} failed to close`, { cause: error });
      } finally {
        this.#onStopped();
      }
    })();
    return this.#stopping;
  }
}
