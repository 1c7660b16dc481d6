import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/system-clock.js';
import { CairnError } from '../errors/cairn-error.js';
import type { Json } from '../model/json.js';
import type { Job, Queue, QueueCapabilities, QueueWorker, SendOptions, WorkOptions } from '../queue/queue.js';
import { toJsonRoundTrip } from '../serialization/json-value.js';
import { assertQueueOpen } from '../queue/assert-queue-open.js';
import { checkSendOptions, checkWorkOptions } from '../queue/check-queue-options.js';
import { LocalWorker, toGroupCaps } from './local-worker.js';
import { QueueChannel } from './queue-channel.js';
import type { QueuedJob } from './ready-jobs.js';

/** Options of `createLocalQueue`. */
export interface LocalQueueOptions {
  /** Drives `delayMs`. Default: the system clock (real timers). Pass a `ManualClock` in tests. */
  clock?: Clock;
  /** The queue's `name`. Default `'local'`. */
  name?: string;
  /**
   * Called with the error of every handler that throws or rejects, and the job it was running. The
   * job is dropped either way (queue-level retries are off); an exception thrown by this hook is
   * ignored.
   */
  onError?: (error: unknown, job: Job) => void;
}

const CAPABILITIES: QueueCapabilities = Object.freeze({
  groups: true,
  delay: true,
  priority: true,
  dedupe: true,
  distributed: false,
});

/**
 * Creates the in-process queue: jobs live in this process's memory only and are lost when it exits.
 *
 * Guarantees:
 * - every payload goes through a JSON round trip when sent, so handlers see what a remote worker
 *   would; a payload that is not JSON is refused with `CairnError('NOT_SERIALIZABLE')` and nothing is
 *   enqueued;
 * - a worker never runs more than `concurrency` jobs at once, nor more jobs of one group than the
 *   cap of that job's tier; a job whose group is at its cap is passed over, so other jobs proceed;
 * - among ready jobs a worker may start, a higher `priority` goes first; within one priority the
 *   groups with ready jobs take turns (round robin), and one group's jobs start in send order;
 * - `delayMs` is measured on the given clock; a job is not started before its delay has elapsed;
 * - while a job with a `dedupeKey` is waiting (delayed or ready), a send with the same key on the
 *   same queue name does nothing;
 * - a handler that throws is reported to `onError` and never run again;
 * - every worker on a queue name draws from the same jobs, and `work()` also picks up jobs sent
 *   before it was called;
 * - `close()` stops every worker, waits for running jobs to settle and discards waiting ones;
 *   afterwards `send` and `work` reject with `CairnError('ENGINE_STOPPED')`.
 */
export function createLocalQueue(options: LocalQueueOptions = {}): Queue {
  return new LocalQueue(options);
}

class LocalQueue implements Queue {
  readonly name: string;
  readonly capabilities = CAPABILITIES;
  readonly #clock: Clock;
  readonly #onError: (error: unknown, job: Job) => void;
  readonly #channels = new Map<string, QueueChannel>();
  // Every worker not yet fully stopped, including ones whose owner called stop() while their jobs
  // are still running: close() must wait for those jobs too.
  readonly #workers = new Set<LocalWorker>();
  // One controller per delayed job rather than one shared signal: a shared AbortSignal with
  // thousands of listeners triggers Node's listener-leak warning.
  readonly #delays = new Set<AbortController>();
  #closing: Promise<void> | undefined;

  constructor(options: LocalQueueOptions) {
    this.name = options.name ?? 'local';
    this.#clock = options.clock ?? systemClock;
    this.#onError = options.onError ?? (() => undefined);
  }

  async send(queue: string, payload: Json, options: SendOptions = {}): Promise<void> {
    this.#assertOpen('send');
    checkQueueName(queue);
    const { delayMs, priority, dedupeKey, group } = checkSendOptions(options);
    // Serialise before touching any state, so a refused payload leaves no trace (not even a
    // dedupe key).
    const { value } = toJsonRoundTrip(payload, { what: `payload of a job for queue "${queue}"` });

    const channel = this.#channel(queue);
    if (dedupeKey !== undefined && !channel.claimDedupeKey(dedupeKey)) return;
    const job: Job = { id: randomUUID(), queue, payload: value };
    if (group !== undefined) job.group = group;
    const entry: QueuedJob = { job, priority, dedupeKey };

    if (delayMs === 0) {
      channel.enqueue(entry);
      return;
    }
    const controller = new AbortController();
    this.#delays.add(controller);
    const due = (): void => {
      this.#delays.delete(controller);
      if (this.#closing === undefined) channel.enqueue(entry);
    };
    // A clock whose sleep fails for any reason other than our abort still releases the job: early
    // delivery is recoverable, a silently lost job is not.
    this.#clock.sleep(delayMs, controller.signal).then(due, due);
  }

  async work(queue: string, handler: (job: Job) => Promise<void>, options: WorkOptions = {}): Promise<QueueWorker> {
    this.#assertOpen('work');
    checkQueueName(queue);
    if (typeof handler !== 'function') throw new CairnError('INVALID_INPUT', 'work() needs a handler function');
    const { concurrency, groupConcurrency } = checkWorkOptions(options);
    const channel = this.#channel(queue);
    const worker: LocalWorker = new LocalWorker(channel, handler, concurrency, toGroupCaps(groupConcurrency), () => this.#workers.delete(worker));
    this.#workers.add(worker);
    channel.attach(worker);
    return worker;
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    for (const controller of this.#delays) controller.abort();
    this.#delays.clear();
    for (const channel of this.#channels.values()) channel.discard();
    await Promise.all(Array.from(this.#workers, (worker) => worker.stop()));
  }

  #assertOpen(operation: string): void {
    assertQueueOpen(this.#closing, 'local', this.name, operation);
  }

  #channel(queue: string): QueueChannel {
    let channel = this.#channels.get(queue);
    if (channel === undefined) {
      channel = new QueueChannel(queue, this.#onError);
      this.#channels.set(queue, channel);
    }
    return channel;
  }
}

function checkQueueName(queue: unknown): void {
  if (typeof queue !== 'string' || queue === '') {
    throw new CairnError('INVALID_INPUT', `a queue name must be a non-empty string, got ${JSON.stringify(queue) ?? String(queue)}`);
  }
}
