/**
 * When the slots of the adapter's pg-boss workers fetch. pg-boss's own loop polls once per interval
 * per slot and per queue, and its LISTEN wakes every slot of every process for each job sent; that
 * made statements per run grow with slots, queues and processes (decision 40). So every slot polls
 * only as a slow backstop and this loop decides which slot fetches, and when:
 *
 * - the idle poll: one statement per interval asks which queues with an idle slot here have a job
 *   ready (`readyQueuesSql`), and one idle slot of each of those fetches; without the schema (a
 *   `PgBoss` passed in), one idle slot per worker per interval;
 * - NOTIFY wakes: the adapter holds the LISTEN and wakes one idle slot per queue and process,
 *   coalesced (`WakeCoalescer`);
 * - chains: a slot that got a job wakes the next idle one (a backlog spreads over every slot), and
 *   a finished job wakes the busy slots (pg-boss would sleep them a full interval after a fetch).
 */
import type { PgBoss } from 'pg-boss';
import { readyQueuesSql } from './ready-queues-sql.js';
import { slotIdle } from './slot-idle.js';
import { WakeCoalescer, type WakeWindow } from './wake-coalescer.js';

/** Least time between two wakes of an idle slot by one grouped worker (see #wakeOneIdleWorker). */
const IDLE_WAKE_MS = 50;

/**
 * How long a NOTIFY waits before it wakes a slot of this process: 2 ms after a quiet spell or a wake
 * that found a job, doubling to 1 s while this process's wakes find nothing (other processes took
 * the jobs); past 1 s a losing process stops waking and leaves the queue to its idle poll (see
 * WakeCoalescer). Waking once per window for good cost each losing process a fetch a second per
 * queue: 0.5 more fetches per run at 8 processes in the bench (decision 47).
 */
const NOTIFY_WAKE_WINDOW: WakeWindow = { minMs: 2, maxMs: 1000 };

/**
 * How often each idle slot polls on its own (seconds). The adapter wakes one idle slot per polling
 * interval itself (the idle poll), so this is only a backstop.
 */
export const SLOT_BACKSTOP_POLL_SECONDS = 300;

/** Options of a `FetchLoop`. */
export interface FetchLoopOptions {
  /** The `PgBoss` whose workers it wakes (through `notifyWorker`, reading `getWipData`). */
  boss: PgBoss;
  /** pg-boss schema of a `PgBoss` the adapter created; undefined for one passed in (no probe then). */
  schema: string | undefined;
  /** The channel pg-boss notifies for this schema, when the adapter listens; undefined: polling only. */
  notifyChannel: string | undefined;
  /** Seconds between idle polls. */
  pollingIntervalSeconds: number;
  /** Receives errors of the probe and of the listener (the loop carries on). */
  report: (error: unknown) => void;
}

/**
 * Decides which slot of the adapter's pg-boss workers fetches, and when (see the file comment).
 * Guarantees: a job ready on a queue with an idle slot here is fetched within a polling interval
 * (sooner when NOTIFY reaches it); a wake only ever hastens a fetch, so a lost or coalesced one
 * costs latency, never a job; after `stopWaking()` it starts no fetch of its own.
 */
export class FetchLoop {
  readonly #boss: PgBoss;
  readonly #schema: string | undefined;
  readonly #notifyChannel: string | undefined;
  readonly #pollingIntervalSeconds: number;
  readonly #report: (error: unknown) => void;
  // The queue of each registered worker, by pg-boss work id.
  readonly #workers = new Map<string, string>();
  // When each grouped worker last woke one of its idle slots (see #wakeOneIdleWorker).
  readonly #lastIdleWake = new Map<string, number>();
  // The job table of each queue (getQueue): one poll statement per table covers its queues.
  readonly #tables = new Map<string, string>();
  readonly #coalescer = new WakeCoalescer(
    (queue) => this.#wakeQueue(queue),
    (queue) => this.#running(queue),
    NOTIFY_WAKE_WINDOW,
  );
  #poller: NodeJS.Timeout | undefined;
  #polling = false;
  #stopped = false;
  #listener: { close(): Promise<void> } | undefined;
  #listening: Promise<void> | undefined;

  constructor(options: FetchLoopOptions) {
    this.#boss = options.boss;
    this.#schema = options.schema;
    this.#notifyChannel = options.notifyChannel;
    this.#pollingIntervalSeconds = options.pollingIntervalSeconds;
    this.#report = options.report;
  }

  /** Records the job table pg-boss keeps `queue` in (`getQueue().table`), for the idle poll. */
  setTable(queue: string, table: string): void {
    this.#tables.set(queue, table);
  }

  /**
   * Starts waking the slots of a registered pg-boss worker; the returned function stops that.
   * The idle poll starts with the first worker.
   */
  addWorker(queue: string, workId: string): () => void {
    this.#workers.set(workId, queue);
    // One poll per process for every queue when the schema is known (#poll); else one per queue.
    const ticker = this.#schema === undefined ? setInterval(() => this.#wakeIdleSlot(workId), this.#pollingIntervalSeconds * 1000) : undefined;
    ticker?.unref();
    if (this.#schema !== undefined && this.#poller === undefined) {
      this.#poller = setInterval(() => void this.#poll(), this.#pollingIntervalSeconds * 1000);
      this.#poller.unref();
    }
    return () => {
      clearInterval(ticker);
      this.#workers.delete(workId);
    };
  }

  /**
   * Opens the LISTEN (once; a no-op without a channel). pg-boss's own listener connection is
   * reused for its reconnection and heartbeat; only its callback differs. Without LISTEN (a db
   * adapter that has none, PgBouncer) workers fall back to polling, and the error is reported once.
   */
  listen(): Promise<void> {
    this.#listening ??= this.#openListener();
    return this.#listening;
  }

  /**
   * A fetch of worker `workId` returned jobs of `queue`: the next idle slot looks (more may be
   * ready), or for a grouped worker one idle slot at most every IDLE_WAKE_MS.
   */
  fetched(queue: string, workId: string | undefined, grouped: boolean): void {
    this.#coalescer.found(queue);
    if (workId === undefined) return;
    if (grouped) this.#wakeOneIdleWorker(workId);
    // A fetch that finds nothing wakes nobody, so the chain ends with the work.
    else this.#wakeIdleSlot(workId);
  }

  /**
   * A batch of worker `workId` ended. A pg-boss worker sleeps a full polling interval after every
   * fetch, even one that found a job, unless it was notified meanwhile. Notifying the busy slots of
   * this worker as a job ends makes a backlog drain at handler speed; idle slots keep sleeping.
   */
  finished(workId: string): void {
    for (const wip of this.#boss.getWipData()) {
      if (wip.workId === workId && !slotIdle(wip)) this.#boss.notifyWorker(wip.id);
    }
  }

  /** Stops every wake and poll of the loop's own; the listener stays open until `close()`. */
  async stopWaking(): Promise<void> {
    this.#stopped = true;
    this.#coalescer.close();
    clearInterval(this.#poller);
    await this.#listening?.catch(() => undefined);
  }

  /** Closes the LISTEN (after `stopWaking()`). */
  async close(): Promise<void> {
    const listener = this.#listener;
    this.#listener = undefined;
    await listener?.close().catch((error: unknown) => this.#report(error));
  }

  // With group caps, a slot whose fetched jobs were over a group's cap gets nothing (pg-boss hands
  // them back) and then sleeps a whole polling interval, though other groups' jobs may be ready —
  // at start-up every slot fetches at once, before any cap is known, and most fetch the same busy
  // group. So each job start wakes one idle slot, which fetches again skipping the full groups:
  // other groups' ready jobs start within tens of milliseconds instead of a polling interval. At
  // most one wake per worker every IDLE_WAKE_MS bounds the extra fetches (20 a second).
  #wakeOneIdleWorker(workId: string): void {
    const now = Date.now();
    if (now - (this.#lastIdleWake.get(workId) ?? 0) < IDLE_WAKE_MS) return;
    if (this.#wakeIdleSlot(workId)) this.#lastIdleWake.set(workId, now);
  }

  /**
   * A NOTIFY (coalesced) for `queue`: one idle slot of each worker on it fetches; a slot that gets a
   * job wakes the next (`fetched`). False when no slot was idle.
   */
  #wakeQueue(queue: string): boolean {
    let woke = false;
    for (const [workId, workerQueue] of this.#workers) {
      if (workerQueue === queue && this.#wakeIdleSlot(workId)) woke = true;
    }
    return woke;
  }

  /**
   * The idle poll of a PgBoss the adapter created: one statement asks which of the queues with an
   * idle slot here have a job ready (a delayed one come due, one put back after its worker died),
   * and only those fetch. pg-boss would fetch every queue every interval: 14 fetches per interval
   * for 7 workflows, in every process.
   */
  async #poll(): Promise<void> {
    if (this.#polling || this.#stopped || this.#schema === undefined) return;
    this.#polling = true;
    try {
      const idle = new Set<string>();
      for (const wip of this.#boss.getWipData()) {
        const queue = this.#workers.get(wip.workId);
        if (queue !== undefined && slotIdle(wip)) idle.add(queue);
      }
      const byTable = new Map<string, string[]>();
      for (const queue of idle) {
        const table = this.#tables.get(queue) ?? 'job_common';
        byTable.set(table, [...(byTable.get(table) ?? []), queue]);
      }
      for (const [table, queues] of byTable) {
        let ready: string[];
        try {
          const result = await this.#boss.getDb().executeSql(readyQueuesSql(this.#schema, table), [queues]);
          ready = (result.rows as { name: string }[]).map((row) => row.name);
        } catch (error) {
          // Whatever broke the probe (an outage, a pg-boss schema it does not know), every queue
          // still gets its fetch, as pg-boss alone would.
          this.#report(error);
          ready = queues;
        }
        for (const queue of ready) this.#wakeQueue(queue);
      }
    } finally {
      this.#polling = false;
    }
  }

  /** True when a slot of a worker on `queue` runs a job. */
  #running(queue: string): boolean {
    const workIds = new Set<string>();
    for (const [workId, workerQueue] of this.#workers) if (workerQueue === queue) workIds.add(workId);
    return this.#boss.getWipData().some((wip) => !slotIdle(wip) && workIds.has(wip.workId));
  }

  /** Makes one idle slot of the worker fetch now; false when every slot is busy. */
  #wakeIdleSlot(workId: string): boolean {
    const idle = this.#boss.getWipData().find((wip) => wip.workId === workId && slotIdle(wip));
    if (idle === undefined) return false;
    this.#boss.notifyWorker(idle.id);
    return true;
  }

  async #openListener(): Promise<void> {
    const db = this.#boss.getDb();
    if (this.#notifyChannel === undefined || typeof db.listen !== 'function') return;
    try {
      this.#listener = await db.listen(
        this.#notifyChannel,
        (queue) => this.#coalescer.notified(queue),
        // (Re)connected: notifications sent meanwhile were missed, so every queue looks once.
        () => {
          for (const workId of this.#workers.keys()) this.#wakeIdleSlot(workId);
        },
      );
    } catch (error) {
      this.#report(error);
    }
  }
}
