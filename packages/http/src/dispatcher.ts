// The dispatcher: a long-lived process that finds due work in the store and pushes it to the push
// handler, for applications whose functions cannot run workers (docs/serverless.md). It holds no
// lease itself: the handler's claim keeps every run exactly-once. Its own claim (a slot per run,
// while it pushes that run) only keeps several dispatchers from pushing the same run twice.
import { randomUUID } from 'node:crypto';
import type { RunRecord } from '@cairn/core';
import { WAKE_TOPIC, type DueRun, type SlotStore, type WorkflowStore } from '@cairn/core/backend';
import { signPush } from './push-signature.js';
import type { NextPush, PushAnswer, PushUnit } from './push-unit.js';

/** How `createDispatcher` pushes. */
export interface DispatcherOptions {
  /** The store the application's engine uses (the dispatcher reads due runs and takes slots in it). */
  store: WorkflowStore;
  /** The push handler's URL. */
  target: string;
  /** The secrets to sign with (every push carries a signature by each: see `signPush`). */
  secrets: string | readonly string[];
  /** Pushes in flight at most (default 8). */
  concurrency?: number;
  /** How long a push may take before it counts as failed (default 60 s): the handler's `maxDurationMs` and some. */
  pushTimeoutMs?: number;
  /** Attempts after the first for a push that failed with a 5xx, a timeout or a network error (default 5). */
  retries?: number;
  /** The first retry's delay (default 250 ms); each next one doubles, up to 30 s, with full jitter. */
  backoffMs?: number;
  /** How often the store is looked at for due runs without a signal (default 1 s). */
  pollIntervalMs?: number;
  /**
   * At most this many pushes of a workflow in flight at once, per workflow name, across every
   * dispatcher over the store that is given the same limits (a slot per workflow in the store,
   * `d:workflow:<name>`). A run push holds one while it pushes that run (its `continue` pushes
   * included), a queued step's push one while it runs. Workflows not named are not limited here.
   */
  workflowLimits?: Readonly<Record<string, number>>;
  /** This dispatcher's id, the holder of its claims (default a random UUID). */
  id?: string;
  /** Told of what the dispatcher does: each push and its answer, each refusal and failure. */
  onEvent?: (event: DispatchEvent) => void;
}

/** What the dispatcher reports through `onEvent`. */
export type DispatchEvent =
  | { type: 'pushed'; unit: PushUnit; answer: PushAnswer; attempt: number }
  | { type: 'retry'; unit: PushUnit; attempt: number; delayMs: number; reason: string }
  | { type: 'gave-up'; unit: PushUnit; reason: string }
  | { type: 'error'; error: unknown };

/** A running dispatcher. */
export interface Dispatcher {
  /** Listens for the store's wake-up signals (when it has them) and starts polling. */
  start(): Promise<void>;
  /** Stops looking for work and waits for the pushes in flight. */
  stop(): Promise<void>;
  /** Pushes answered so far (each attempt that got an answer). */
  readonly pushes: number;
}

const MAX_BACKOFF_MS = 30_000;
// How long the claim on a run outlives the push it covers, so it cannot lapse between two pushes.
const CLAIM_MARGIN_MS = 5_000;

/** A run is due for a push when its timer passed, or its lease expired (its pusher died). */
function isDue(run: RunRecord | undefined, now: number): boolean {
  if (run === undefined || run.paused !== undefined) return false;
  if (run.status === 'running') return run.lease === undefined || run.lease.expiresAt <= now;
  if (run.status !== 'pending' && run.status !== 'waiting') return false;
  return run.wakeAt !== undefined && run.wakeAt <= now;
}

/**
 * Makes a dispatcher over `store` that pushes due runs to `target`. It finds work by the store's
 * wake-up signals (PostgreSQL, Redis: a run started or woken anywhere is pushed at once) and by
 * polling `runs.findDue` every `pollIntervalMs`, and follows each answer's `next` (a run again
 * while it says `continue`, the queued steps it hands back, the run a step woke). Before pushing a
 * run it takes a slot for it in the store (limit 1, held while it pushes that run) and reads the
 * run again: several dispatchers over one store push each due run once. Failed pushes (5xx,
 * timeouts, network errors) are retried with backoff; a 4xx (a wrong secret) is not.
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { store, target } = options;
  const secrets = typeof options.secrets === 'string' ? [options.secrets] : [...options.secrets];
  if (secrets.length === 0) throw new TypeError('createDispatcher: at least one secret is needed');
  new URL(target); // a malformed target throws here, not at the first push
  const concurrency = options.concurrency ?? 8;
  const pushTimeoutMs = options.pushTimeoutMs ?? 60_000;
  const retries = options.retries ?? 5;
  const backoffMs = options.backoffMs ?? 250;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const id = options.id ?? randomUUID();
  const workflowLimits = new Map(Object.entries(options.workflowLimits ?? {}));
  for (const [workflow, limit] of workflowLimits)
    if (!Number.isInteger(limit) || limit < 1)
      throw new TypeError(`createDispatcher: the limit of ${workflow} must be a positive integer, got ${String(limit)}`);
  if (workflowLimits.size > 0 && store.slots === undefined) throw new TypeError('createDispatcher: workflowLimits need a store with slots');
  const report = options.onEvent ?? (() => {});
  const stopping = new AbortController();
  const inFlight = new Set<string>();
  const tasks = new Set<Promise<void>>();
  let active = 0;
  const waiters: (() => void)[] = [];
  let pushes = 0;
  let stopListening: (() => Promise<void>) | undefined;
  let poll: NodeJS.Timeout | undefined;
  let wakeTimer: { at: number; timer: NodeJS.Timeout } | undefined;
  let sweeping = false;
  let sweepAgain = false;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      const early = () => {
        clearTimeout(timer);
        resolve();
      };
      stopping.signal.addEventListener('abort', early, { once: true });
    });

  // At most `concurrency` pushes in flight.
  const acquire = async () => {
    while (active >= concurrency) await new Promise<void>((resolve) => waiters.push(resolve));
    active++;
  };
  const release = () => {
    active--;
    waiters.shift()?.();
  };

  const track = (task: Promise<void>) => {
    tasks.add(task);
    void task.finally(() => tasks.delete(task));
  };

  /** POSTs one unit, retrying 5xx, timeouts and network errors; undefined when it gave up. */
  const push = async (unit: PushUnit): Promise<PushAnswer | undefined> => {
    const body = JSON.stringify(unit);
    for (let attempt = 0; ; attempt++) {
      if (stopping.signal.aborted) return undefined;
      let reason: string;
      await acquire();
      try {
        const response = await fetch(target, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...signPush(body, secrets) },
          body,
          signal: AbortSignal.timeout(pushTimeoutMs),
        });
        const text = await response.text();
        if (response.ok) {
          pushes++;
          const answer = JSON.parse(text) as PushAnswer;
          report({ type: 'pushed', unit, answer, attempt });
          return answer;
        }
        reason = `HTTP ${response.status}: ${text.slice(0, 200)}`;
        if (response.status < 500) {
          report({ type: 'gave-up', unit, reason });
          return undefined;
        }
      } catch (error) {
        reason = error instanceof Error ? error.message : String(error);
      } finally {
        release();
      }
      if (attempt >= retries) {
        report({ type: 'gave-up', unit, reason });
        return undefined;
      }
      const delayMs = Math.round(Math.random() * Math.min(MAX_BACKOFF_MS, backoffMs * 2 ** attempt));
      report({ type: 'retry', unit, attempt, delayMs, reason });
      await sleep(delayMs);
    }
  };

  /** Sweeps again at `at`, the earliest wake time an answer told of (a sleep ending). */
  const wakeLater = (at: number) => {
    if (wakeTimer !== undefined && wakeTimer.at <= at) return;
    if (wakeTimer !== undefined) clearTimeout(wakeTimer.timer);
    const timer = setTimeout(
      () => {
        wakeTimer = undefined;
        sweepSoon();
      },
      Math.max(0, Math.min(at - Date.now(), 2 ** 31 - 1)),
    );
    timer.unref();
    wakeTimer = { at, timer };
  };

  const follow = (next: readonly NextPush[]) => {
    for (const unit of next) {
      if (unit.kind === 'run') track(driveRun(unit.runId));
      else track(driveStep(unit.job, unit.delayMs));
    }
  };

  /** The workflow's limit and slot key, when `workflowLimits` names it. */
  const limitOf = (workflow: string) => {
    const limit = workflowLimits.get(workflow);
    return limit === undefined ? undefined : { key: `d:workflow:${workflow}`, limit };
  };
  const claimFor = () => Date.now() + pushTimeoutMs * (retries + 1) + CLAIM_MARGIN_MS;
  // Resolved when this dispatcher frees a workflow slot: a step waiting for one tries again at once.
  const freedSignal = () => {
    let resolve = () => {};
    const promise = new Promise<void>((done) => {
      resolve = done;
    });
    return { promise, resolve };
  };
  let slotFreed = freedSignal();
  const releaseSlot = async (key: string, holder: string) => {
    await store.slots?.release(key, holder, Date.now()).catch((error: unknown) => report({ type: 'error', error }));
    if (key.startsWith('d:workflow:')) {
      slotFreed.resolve();
      slotFreed = freedSignal();
    }
  };
  const takeSlot = async (key: string, limit: number, holder: string) =>
    (await (store.slots as SlotStore).acquire({ key, limit, holder, expiresAt: claimFor() }, Date.now())).acquired;

  const driveStep = async (job: Extract<NextPush, { kind: 'step' }>['job'], delayMs: number | undefined) => {
    if (delayMs !== undefined) await sleep(delayMs);
    const limited = limitOf(job.workflow);
    const holder = `${id}:step:${job.runId}:${job.key}:${job.attempt}`;
    try {
      // A step's push is not found again by a poll: it waits here for a slot of its workflow.
      while (limited !== undefined && !(await takeSlot(limited.key, limited.limit, holder))) {
        if (stopping.signal.aborted) return;
        await Promise.race([sleep(pollIntervalMs), slotFreed.promise]);
      }
      const answer = await push({ kind: 'step', job });
      if (answer !== undefined) follow(answer.next);
    } catch (error) {
      report({ type: 'error', error });
    } finally {
      if (limited !== undefined) await releaseSlot(limited.key, holder);
    }
  };

  /** Pushes the run while it says `continue`, holding the claim on it throughout. */
  const driveRun = async (runId: string): Promise<void> => {
    if (inFlight.has(runId) || stopping.signal.aborted) return;
    inFlight.add(runId);
    const key = `d:run:${runId}`;
    const slots = store.slots;
    const held: string[] = [];
    let pushed = false;
    try {
      if (slots !== undefined) {
        if (!(await takeSlot(key, 1, id))) return;
        held.push(key);
      }
      // Read again under the claim: another dispatcher may have pushed it since it was found due.
      const run = await store.runs.get(runId);
      if (run === undefined || !isDue(run, Date.now())) return;
      const limited = limitOf(run.workflow);
      if (limited !== undefined) {
        // The workflow is at its limit: the run stays due, a later sweep takes it.
        if (!(await takeSlot(limited.key, limited.limit, `${id}:run:${runId}`))) return;
        held.push(limited.key);
      }
      for (;;) {
        const answer = await push({ kind: 'run', runId });
        if (answer === undefined) return;
        pushed = true;
        if (answer.wakeAt !== undefined && answer.status === 'waiting') wakeLater(answer.wakeAt);
        const again = answer.next.some((unit) => unit.kind === 'run' && unit.runId === runId);
        follow(answer.next.filter((unit) => !(unit.kind === 'run' && unit.runId === runId)));
        if (!again || stopping.signal.aborted) return;
        for (const slot of held) if (!(await slots?.renew(slot, slot === key ? id : `${id}:run:${runId}`, claimFor(), Date.now()))) return;
      }
    } catch (error) {
      report({ type: 'error', error });
    } finally {
      inFlight.delete(runId);
      for (const slot of held.reverse()) await releaseSlot(slot, slot === key ? id : `${id}:run:${runId}`);
      // A push ended: room for more due work. Only then: a run it could not claim (another
      // dispatcher holds it, or its workflow is at its limit) is looked at again by the next poll,
      // not at once — sweeping again at once would try the same run in a loop of store writes.
      if (pushed) sweepSoon();
    }
  };

  const sweep = async () => {
    if (sweeping) {
      sweepAgain = true;
      return;
    }
    sweeping = true;
    try {
      do {
        sweepAgain = false;
        if (stopping.signal.aborted) return;
        const room = concurrency * 4 - inFlight.size;
        if (room <= 0) return;
        let due: DueRun[];
        try {
          due = await store.runs.findDue(Date.now(), Math.min(room, 500));
        } catch (error) {
          report({ type: 'error', error });
          return;
        }
        for (const run of due) if (!inFlight.has(run.id)) track(driveRun(run.id));
      } while (sweepAgain);
    } finally {
      sweeping = false;
    }
  };
  const sweepSoon = () => void sweep();

  return {
    get pushes() {
      return pushes;
    },
    async start() {
      if (store.signals !== undefined) stopListening = await store.signals.listen(WAKE_TOPIC, () => sweepSoon());
      poll = setInterval(sweepSoon, pollIntervalMs);
      sweepSoon();
    },
    async stop() {
      stopping.abort();
      if (poll !== undefined) clearInterval(poll);
      if (wakeTimer !== undefined) clearTimeout(wakeTimer.timer);
      await stopListening?.();
      while (tasks.size > 0) await Promise.allSettled([...tasks]);
    },
  };
}
