import { randomUUID } from 'node:crypto';
import { CairnError, type Json } from '@cairn/core';
import {
  assertQueueOpen,
  callDriver,
  checkWorkOptions,
  createOutageLog,
  reportSafely,
  type OutageLog,
  type GroupConcurrency,
  type Job,
  type Queue,
  type QueueCapabilities,
  type QueueWorker,
  type SendOptions,
  type WorkOptions,
} from '@cairn/core/backend';
import { PgBoss, type ConstructorOptions, type Job as BossJob, type JobResult, type SendOptions as BossSendOptions } from 'pg-boss';
import { BOSS_DEFAULTS } from './boss-defaults.js';
import { FetchLoop, SLOT_BACKSTOP_POLL_SECONDS } from './fetch-loop.js';
import { decodeEnvelope, encodeEnvelope, type JobEnvelope } from './job-envelope.js';
import { pgBossNotifyChannel } from './notify-channel.js';
import { checkPgBossSendOptions, checkQueueName, groupConcurrencyKey } from './send-options.js';

/** Options of `createPgBossQueue`. */
export interface PgBossQueueOptions {
  /**
   * A `PgBoss` you created. The adapter starts it if needed (`start()` is idempotent) but never
   * stops it: `close()` only stops the workers the adapter registered. Its schema is the one you
   * gave it, so `schema`, `connectionString` and `bossOptions` must not be set alongside it. One
   * without an `'error'` listener gets the adapter's (which reports to `onError`): without any,
   * pg-boss's first connection error would end the process.
   */
  boss?: PgBoss;
  /** PostgreSQL connection string for the `PgBoss` the adapter creates (and stops on `close()`). */
  connectionString?: string;
  /** pg-boss schema (default `pgboss`). Every queue, job and worker of this adapter lives in it. */
  schema?: string;
  /**
   * Every other option of the `PgBoss` constructor, passed through unchanged: `pg` settings (`host`,
   * `port`, `user`, `password`, `database`, `ssl`, `max`, `application_name`, a `db` adapter...),
   * maintenance intervals, and so on. Two defaults differ from pg-boss's, each a per-process timer
   * the adapter does not need: `schedule` (default `false` here: Cairn schedules nothing in pg-boss)
   * and `flowIntervalSeconds` (default 3600 here: the adapter sends no flows); set them to restore
   * pg-boss's. `useListenNotify` (default `true` here) is taken by the
   * adapter: it holds the one LISTEN connection of the `PgBoss` itself and wakes one idle slot per
   * process and queue for each burst of notifications (pg-boss would wake every slot); `false`
   * leaves new jobs to polling.
   */
  bossOptions?: Omit<ConstructorOptions, 'connectionString' | 'schema'>;
  /** The queue's `name` (default `'pg-boss'`), shown in engine errors. */
  name?: string;
  /**
   * How many times a job whose worker died (or overran `expireInSeconds`, or stopped sending
   * heartbeats) is put back in the queue. Default 5. Handler failures never use it: a job whose
   * handler throws fails at once. Past the limit the job fails and the engine's recovery loop
   * re-dispatches the work it still owes. 0 leaves redelivery to the engine alone.
   */
  redeliveryLimit?: number;
  /**
   * How long a job may stay active before pg-boss takes it back (default 900, pg-boss's own
   * default). A live handler that overruns it is abandoned and its job redelivered, so keep it
   * above your longest queued step.
   */
  expireInSeconds?: number;
  /**
   * Workers refresh a heartbeat every half of this; a job whose heartbeat lapses (its worker died)
   * is redelivered without waiting for `expireInSeconds`. Default 30 (pg-boss's minimum is 10);
   * `null` turns heartbeats off.
   */
  heartbeatSeconds?: number | null;
  /**
   * Idle polling interval (default 2, minimum 0.5): a delayed job, or one put back after its worker
   * died, is found within this. On a `PgBoss` the adapter created, each process polls all the
   * queues it serves with one statement per interval (which of them have a job ready) and fetches
   * only from those; with a `PgBoss` you passed in (whose schema it does not know), one fetch per
   * queue per interval. Either way, whatever the concurrency. A new ready job wakes a slot at once
   * through LISTEN/NOTIFY.
   */
  pollingIntervalSeconds?: number;
  /** How long finished jobs stay in pg-boss's tables (default 3600). Cairn keeps results in its store. */
  deleteAfterSeconds?: number;
  /**
   * Receives every error: a handler that threw (with its job) and pg-boss's own `error` events
   * (without one) when the adapter created the `PgBoss`. Default: handler errors are ignored (the
   * engine records them) and pg-boss errors are written to `console.error` once per cause while
   * they last (pg-boss emits one for every failed poll of every worker during a database outage),
   * with one line when pg-boss works again. A hook of your own receives each event.
   */
  onError?: (error: unknown, job?: Job) => void;
}

const CAPABILITIES: QueueCapabilities = Object.freeze({
  groups: true,
  delay: true,
  priority: true,
  dedupe: true,
  distributed: true,
});

// `short`: at most one *created* (queued, not yet started) job per singleton key, any number
// active. That is exactly Cairn's dedupe contract; `standard` would not dedupe at all.
const POLICY = 'short';

/**
 * Creates a Cairn queue over pg-boss 12: jobs are rows in PostgreSQL, visible to every process
 * that uses the same database and schema.
 *
 * - `send`: `delayMs` → `startAfter` (measured on the database clock), `priority` → pg-boss
 *   `priority` (both "higher runs sooner"; 32-bit integers only), `dedupeKey` → `singletonKey` on a
 *   `short`-policy queue (a second send is a no-op while the first job is queued, and enqueues again
 *   once it has started), `group` → pg-boss's own `group: { id, tier }`. Payloads travel as JSON
 *   text, so they come back exactly as a JSON round trip leaves them.
 * - `work`: `concurrency` → `localConcurrency`; `groupConcurrency` → `localGroupConcurrency`, so a
 *   group at its cap is left out of the fetch itself. The cap holds per `PgBoss` instance and queue
 *   name; two workers of this adapter on one name must use the same cap.
 * - Queue-level retries are off: a handler that throws fails its job for good. A job whose worker
 *   died is redelivered (heartbeat or expiry, up to `redeliveryLimit` times).
 * - Each queue name is created once (`createQueue`, cached) on first use.
 */
export function createPgBossQueue(options: PgBossQueueOptions = {}): Queue {
  return new PgBossQueue(options);
}

class PgBossQueue implements Queue {
  readonly name: string;
  readonly capabilities = CAPABILITIES;
  readonly #boss: PgBoss;
  readonly #ownsBoss: boolean;
  readonly #redeliveryLimit: number;
  readonly #expireInSeconds: number;
  readonly #heartbeatSeconds: number | null;
  readonly #pollingIntervalSeconds: number;
  readonly #deleteAfterSeconds: number;
  readonly #onError: (error: unknown, job?: Job) => void;
  readonly #outage: OutageLog | undefined;
  #starting: Promise<void> | undefined;
  #startAttempted = false;
  // One createQueue (and policy check) per queue name for the life of the adapter.
  readonly #queues = new Map<string, Promise<void>>();
  readonly #workers = new Set<PgBossWorker>();
  // pg-boss keeps localGroupConcurrency per instance and queue name, so concurrent workers on one
  // name share one cap; a second worker with a different cap would silently replace the first's.
  readonly #groupCaps = new Map<string, { key: string; workers: number }>();
  // Which slot fetches, and when: the idle poll, NOTIFY wakes and the wake chains (fetch-loop.ts).
  readonly #fetchLoop: FetchLoop;
  #closing: Promise<void> | undefined;

  constructor(options: PgBossQueueOptions) {
    this.name = options.name ?? 'pg-boss';
    this.#redeliveryLimit = options.redeliveryLimit ?? 5;
    if (!Number.isInteger(this.#redeliveryLimit) || this.#redeliveryLimit < 0) {
      throw new CairnError('INVALID_INPUT', `redeliveryLimit must be an integer ≥ 0, got ${String(options.redeliveryLimit)}`);
    }
    this.#expireInSeconds = options.expireInSeconds ?? 900;
    this.#heartbeatSeconds = options.heartbeatSeconds === undefined ? 30 : options.heartbeatSeconds;
    this.#pollingIntervalSeconds = options.pollingIntervalSeconds ?? 2;
    this.#deleteAfterSeconds = options.deleteAfterSeconds ?? 3600;
    const outage =
      options.onError === undefined
        ? createOutageLog('[cairn/queue-pg-boss]', (line, error) => console.error(line, ...(error === undefined ? [] : [error])))
        : undefined;
    this.#outage = outage;
    this.#onError =
      options.onError ??
      ((error, job) => {
        if (job === undefined) outage?.report(error, 'pg-boss error');
      });
    if (options.boss !== undefined) {
      if (options.connectionString !== undefined || options.schema !== undefined || options.bossOptions !== undefined) {
        throw new CairnError(
          'INVALID_INPUT',
          'createPgBossQueue: pass either a PgBoss (boss) or connection settings (connectionString, schema, bossOptions), not both',
        );
      }
      this.#boss = options.boss;
      this.#ownsBoss = false;
      // Its schema is unknown here, so no idle-poll probe (one fetch per queue per interval) and
      // pg-boss's own LISTEN, if on.
      this.#fetchLoop = new FetchLoop({
        boss: this.#boss,
        schema: undefined,
        notifyChannel: undefined,
        pollingIntervalSeconds: this.#pollingIntervalSeconds,
        report: (error) => this.#report(error),
      });
      // A PgBoss without an 'error' listener crashes the process at its first connection error
      // (an EventEmitter throws then). Yours keeps any listener you attached; without one it gets
      // the adapter's, which reports through onError.
      if (this.#boss.listenerCount('error') === 0) this.#boss.on('error', (error) => this.#report(error));
    } else {
      // A NOTIFY per ready job wakes idle workers at once instead of after a poll. pg-boss's own
      // listener wakes every slot of the queue in every process for each job (a herd: 40 fetches per
      // job for 4 processes of 10 slots), so the adapter listens instead and wakes one slot per
      // process, coalesced (FetchLoop).
      const listen = options.bossOptions?.useListenNotify ?? true;
      const bossOptions: ConstructorOptions = {
        ...BOSS_DEFAULTS,
        ...options.bossOptions,
        useListenNotify: false,
        ...(options.connectionString === undefined ? {} : { connectionString: options.connectionString }),
        ...(options.schema === undefined ? {} : { schema: options.schema }),
      };
      if (bossOptions.connectionString === undefined && bossOptions.host === undefined && bossOptions.db === undefined && bossOptions.database === undefined) {
        throw new CairnError('INVALID_INPUT', 'createPgBossQueue: pass a PgBoss (boss), a connectionString, or pg settings in bossOptions');
      }
      this.#boss = new PgBoss(bossOptions);
      this.#ownsBoss = true;
      const schema = options.schema ?? 'pgboss';
      this.#fetchLoop = new FetchLoop({
        boss: this.#boss,
        schema,
        notifyChannel: listen ? pgBossNotifyChannel(schema) : undefined,
        pollingIntervalSeconds: this.#pollingIntervalSeconds,
        report: (error) => this.#report(error),
      });
      // An EventEmitter without an `error` listener throws from emit(), which would take the
      // process down on a transient connection error.
      this.#boss.on('error', (error) => this.#report(error));
    }
  }

  async send(queue: string, payload: Json, options: SendOptions = {}): Promise<void> {
    this.#assertOpen('send');
    checkQueueName(queue);
    const checked = checkPgBossSendOptions(options);
    // Serialise before any round trip, so a refused payload leaves nothing behind.
    const envelope = encodeEnvelope(payload, queue);
    await this.#ensureQueue(queue);
    const sendOptions: BossSendOptions = {
      ...this.#jobSettings(),
      priority: checked.priority,
      // A short-policy queue allows one queued job per singleton key, and a job without a key
      // counts as key ''. Keyless jobs get a unique key of their own, in a separate namespace.
      singletonKey: checked.dedupeKey === undefined ? `u:${randomUUID()}` : `k:${checked.dedupeKey}`,
    };
    // Seconds as text become an interval added to the database's now(): the delay is measured on
    // one clock however far this machine's clock has drifted.
    if (checked.delayMs > 0) sendOptions.startAfter = checked.delayMs / 1000;
    if (checked.group !== undefined) sendOptions.group = checked.group;
    await this.#call(`send to ${queue}`, () => this.#boss.send(queue, envelope as unknown as object, sendOptions));
  }

  async work(queue: string, handler: (job: Job) => Promise<void>, options: WorkOptions = {}): Promise<QueueWorker> {
    this.#assertOpen('work');
    checkQueueName(queue);
    if (typeof handler !== 'function') throw new CairnError('INVALID_INPUT', 'work() needs a handler function');
    const { concurrency, groupConcurrency } = checkWorkOptions(options);
    const capKey = groupConcurrencyKey(groupConcurrency);
    if (groupConcurrency !== undefined) {
      const held = this.#groupCaps.get(queue);
      if (held !== undefined && held.key !== capKey) {
        throw new CairnError(
          'INVALID_INPUT',
          `pg-boss shares one groupConcurrency per queue name and process; a worker on "${queue}" already runs with a different cap`,
          {
            data: { queue },
          },
        );
      }
      this.#groupCaps.set(queue, { key: capKey, workers: (held?.workers ?? 0) + 1 });
    }
    let workId: string | undefined;
    // pg-boss polls once per interval per slot: an idle process would fetch concurrency × queues
    // times per interval (70 a second for 7 workflows at concurrency 10), and every process added
    // adds as many. So each slot polls only as a backstop, and the adapter's FetchLoop wakes the
    // slots: the idle poll, a slot that got a job waking the next (a backlog still spreads over
    // every slot at fetch speed), and a NOTIFY waking one idle slot per process.
    const slotPollSeconds = Math.max(SLOT_BACKSTOP_POLL_SECONDS, this.#pollingIntervalSeconds);
    try {
      await this.#ensureQueue(queue);
      // Only a process with workers listens: one that only sends needs no connection for it.
      await this.#fetchLoop.listen();
      workId = await this.#call(`work on ${queue}`, () =>
        this.#boss.work<JobEnvelope>(
          queue,
          {
            localConcurrency: concurrency,
            batchSize: 1,
            pollingIntervalSeconds: slotPollSeconds,
            // Delayed jobs never NOTIFY; a relaxed notify-mode poll would find them late.
            notifyPollingIntervalSeconds: slotPollSeconds,
            ...(groupConcurrency === undefined ? {} : { localGroupConcurrency: clampCaps(groupConcurrency, concurrency) }),
            // Lets a throwing handler fail its job terminally while redelivery stays on.
            perJobResults: true,
          },
          (jobs) => this.#runBatch(queue, jobs, handler, workId, groupConcurrency !== undefined),
        ),
      );
    } catch (error) {
      if (groupConcurrency !== undefined) this.#releaseGroupCap(queue);
      throw error;
    }
    const removeFromLoop = this.#fetchLoop.addWorker(queue, workId);
    const worker = new PgBossWorker(this.#boss, queue, workId, () => {
      removeFromLoop();
      this.#workers.delete(worker);
      if (groupConcurrency !== undefined) this.#releaseGroupCap(queue);
    });
    this.#workers.add(worker);
    return worker;
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    await this.#fetchLoop.stopWaking();
    const stops = await Promise.allSettled(Array.from(this.#workers, (worker) => worker.stop()));
    await this.#fetchLoop.close();
    // Only a PgBoss the adapter created is stopped; one the caller passed in stays theirs.
    // Even after a failed start: pg-boss leaves what it had started for stop() to clean up.
    if (this.#ownsBoss && this.#startAttempted) {
      await this.#starting?.catch(() => undefined);
      await this.#call('stop', () => this.#boss.stop({ graceful: true, close: true }));
    }
    const failed = stops.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async #runBatch(
    queue: string,
    jobs: BossJob<JobEnvelope>[],
    handler: (job: Job) => Promise<void>,
    workId: string | undefined,
    grouped: boolean,
  ): Promise<JobResult[]> {
    const results: JobResult[] = [];
    // A fetch that returned jobs: the database answers again, and this process's NOTIFY wakes pay.
    this.#outage?.recovered();
    // More may be ready (a backlog, delayed jobs come due together): the next idle slot looks.
    this.#fetchLoop.fetched(queue, workId, grouped);
    try {
      for (const bossJob of jobs) results.push(await this.#runOne(queue, bossJob, handler));
    } finally {
      if (workId !== undefined) this.#fetchLoop.finished(workId);
    }
    return results;
  }

  async #runOne(queue: string, bossJob: BossJob<JobEnvelope>, handler: (job: Job) => Promise<void>): Promise<JobResult> {
    let job: Job | undefined;
    try {
      job = { id: bossJob.id, queue, payload: decodeEnvelope(bossJob.data, bossJob.id) };
      if (bossJob.groupId) job.group = bossJob.groupTier ? { id: bossJob.groupId, tier: bossJob.groupTier } : { id: bossJob.groupId };
      await handler(job);
      return { id: bossJob.id, status: 'completed' };
    } catch (error) {
      this.#report(error, job ?? { id: bossJob.id, queue, payload: null });
      // `deadletter` fails the job terminally whatever retries remain (there is no dead letter
      // queue here); `failed` would spend the redelivery budget on an ordinary exception.
      return { id: bossJob.id, status: 'deadletter', output: { message: error instanceof Error ? error.message : String(error) } };
    }
  }

  #jobSettings(): BossSendOptions {
    const settings: BossSendOptions = {
      retryLimit: this.#redeliveryLimit,
      retryDelay: 0,
      retryBackoff: false,
      expireInSeconds: this.#expireInSeconds,
      deleteAfterSeconds: this.#deleteAfterSeconds,
    };
    if (this.#heartbeatSeconds !== null) settings.heartbeatSeconds = this.#heartbeatSeconds;
    return settings;
  }

  #ensureQueue(queue: string): Promise<void> {
    let ready = this.#queues.get(queue);
    if (ready === undefined) {
      ready = this.#createQueue(queue);
      this.#queues.set(queue, ready);
      // A failed attempt is not cached: the next send or work tries again.
      ready.catch(() => this.#queues.delete(queue));
    }
    return ready;
  }

  async #createQueue(queue: string): Promise<void> {
    await this.#start();
    const { retryLimit, retryDelay, retryBackoff, expireInSeconds, deleteAfterSeconds, heartbeatSeconds } = this.#jobSettings();
    await this.#call(`createQueue ${queue}`, () =>
      this.#boss.createQueue(queue, {
        policy: POLICY,
        notify: true,
        ...{ retryLimit, retryDelay, retryBackoff, expireInSeconds, deleteAfterSeconds },
        ...(heartbeatSeconds === undefined ? {} : { heartbeatSeconds }),
      }),
    );
    // createQueue does nothing for an existing queue, whose policy may not be ours.
    const existing = await this.#call(`getQueue ${queue}`, () => this.#boss.getQueue(queue));
    if (existing?.table !== undefined) this.#fetchLoop.setTable(queue, existing.table);
    if (existing !== null && existing.policy !== POLICY) {
      throw new CairnError(
        'QUEUE_UNSUPPORTED',
        `pg-boss queue "${queue}" already exists with policy "${String(existing.policy)}"; Cairn needs policy "${POLICY}" so that a dedupe key only holds while its job is queued. Use another schema or engine queuePrefix, or delete that queue`,
        { data: { queue, policy: String(existing.policy) } },
      );
    }
  }

  #start(): Promise<void> {
    if (this.#starting === undefined) {
      this.#startAttempted = true;
      const starting = this.#call('start', async () => {
        await this.#boss.start();
      });
      this.#starting = starting;
      // A failed start (database down) is not cached: the next send or work tries again.
      starting.catch(() => {
        if (this.#starting === starting) this.#starting = undefined;
      });
    }
    return this.#starting;
  }

  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const result = await callDriver('QUEUE_ERROR', `pg-boss ${what}`, fn);
    this.#outage?.recovered();
    return result;
  }

  #releaseGroupCap(queue: string): void {
    const held = this.#groupCaps.get(queue);
    if (held === undefined) return;
    if (held.workers <= 1) this.#groupCaps.delete(queue);
    else held.workers -= 1;
  }

  #report(error: unknown, job?: Job): void {
    reportSafely(this.#onError, error, job);
  }

  #assertOpen(operation: string): void {
    assertQueueOpen(this.#closing, 'pg-boss', this.name, operation);
  }
}

// pg-boss refuses a group cap above localConcurrency. Such a cap can never bind anyway (a worker
// never runs more jobs than it has slots), so it is lowered to the slot count.
function clampCaps(caps: GroupConcurrency, concurrency: number): GroupConcurrency {
  const clamp = (cap: number) => Math.min(cap, concurrency);
  if (typeof caps === 'number') return clamp(caps);
  return { default: clamp(caps.default), tiers: Object.fromEntries(Object.entries(caps.tiers ?? {}).map(([tier, cap]) => [tier, clamp(cap)])) };
}

/** One `work()` registration: stopping it drains its slots (pg-boss `offWork` with `wait`). */
class PgBossWorker implements QueueWorker {
  /** The queue it consumes. */
  readonly queue: string;
  /** pg-boss's id of the `work()` call, shared by its slots. */
  readonly workId: string;
  readonly #boss: PgBoss;
  readonly #onStopped: () => void;
  #stopping: Promise<void> | undefined;

  constructor(boss: PgBoss, queue: string, workId: string, onStopped: () => void) {
    this.#boss = boss;
    this.queue = queue;
    this.workId = workId;
    this.#onStopped = onStopped;
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      try {
        await this.#boss.offWork(this.queue, { id: this.workId, wait: true });
      } catch (error) {
        throw new CairnError('QUEUE_ERROR', `pg-boss offWork on ${this.queue} failed`, { cause: error });
      } finally {
        this.#onStopped();
      }
    })();
    return this.#stopping;
  }
}
