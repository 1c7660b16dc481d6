import type { Clock } from '../clock/clock.js';
import { CairnError } from '../errors/cairn-error.js';
import { OUTAGE_QUIET_MS, errorCause } from '../errors/outage-log.js';
import type { RuntimeLogger } from '../logging/runtime-logger.js';
import type { LogData } from '../logging/engine-logger.js';

/** Default of `EngineOptions.startTimeoutMs`: how long `engine.start()` waits for an unreachable store or queue. */
export const DEFAULT_START_TIMEOUT_MS = 60_000;

// Waits between two tries of an unreachable store or queue in start(): doubling from 100 ms to 2 s.
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;

/** True for the errors an outage of the store or the queue produces (the stores and queues wrap driver errors in these). */
export function isOutageError(error: unknown): error is CairnError {
  return CairnError.is(error, 'STORE_ERROR') || CairnError.is(error, 'QUEUE_ERROR');
}

// Two outage errors have the same cause when their codes and innermost causes match.
const causeKey = (error: CairnError): string => `${error.code}|${errorCause(error)}`;

/**
 * Logs an outage of the store or the queue once per cause instead of once per failed call or
 * retry, and its end once. The engine's logger is wrapped (`logger`): a `STORE_ERROR` or
 * `QUEUE_ERROR` passed as `data.err` is logged the first time its cause is seen during an
 * outage and counted after that; everything else goes through unchanged. `recovered()` (called
 * when a store round trip of the recovery loop or of `start()` succeeds) ends an open outage with
 * one line saying how long it lasted and how many errors were not logged — once no error has come
 * for `OUTAGE_QUIET_MS` (1 s), so the stragglers of work begun during the outage stay part of it.
 */
export class OutageLog {
  readonly logger: RuntimeLogger;
  #since: number | undefined;
  #lastFailure = 0;
  readonly #causes = new Set<string>();
  #suppressed = 0;

  constructor(
    private readonly target: RuntimeLogger,
    private readonly clock: Clock,
  ) {
    this.logger = {
      ...target,
      warn: (data, message) => this.route('warn', data, message),
      error: (data, message) => this.route('error', data, message),
    };
  }

  // An outage error passed as `data.err` is reported once per cause; anything else goes through.
  private route(level: 'warn' | 'error', data: LogData, message: string): void {
    const error = data?.['err'];
    if (isOutageError(error)) this.failed(message, error, data, level);
    else this.target[level](data, message);
  }

  /** Reports an outage error: logged if its cause is new in this outage, counted otherwise. */
  failed(message: string, error: CairnError, data: LogData = { err: error }, level: 'warn' | 'error' = 'error'): void {
    this.#since ??= this.clock.now();
    this.#lastFailure = this.clock.now();
    const key = causeKey(error);
    if (this.#causes.has(key)) {
      this.#suppressed++;
      return;
    }
    this.#causes.add(key);
    this.target[level](data, `${message} (store or queue unreachable? further errors with this cause are not logged until it recovers)`);
  }

  /**
   * A store round trip succeeded: ends an open outage with one line, once no error has come for
   * `OUTAGE_QUIET_MS` — or at once with `now` (`start()`: the step it retried has succeeded).
   */
  recovered(now = false): void {
    if (this.#since === undefined || (!now && this.clock.now() - this.#lastFailure < OUTAGE_QUIET_MS)) return;
    const seconds = ((this.clock.now() - this.#since) / 1000).toFixed(1);
    this.target.warn(
      { outageMs: this.clock.now() - this.#since, suppressed: this.#suppressed },
      `store and queue reachable again after ${seconds} s of errors (${this.#suppressed} more errors with the same causes were not logged)`,
    );
    this.#since = undefined;
    this.#causes.clear();
    this.#suppressed = 0;
  }
}

/** `startTimeoutMs` as given to `createEngine`: a number ≥ 0, or `Infinity`. */
export function checkStartTimeout(value: unknown): number {
  if (value === undefined) return DEFAULT_START_TIMEOUT_MS;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new CairnError('INVALID_INPUT', `createEngine: startTimeoutMs must be a number ≥ 0 (or Infinity), got ${String(value)}`, {
      data: { startTimeoutMs: String(value) },
    });
  }
  return value;
}

/** Where `engine.start()` stands while it waits for the store and the queue. */
export interface StartWait {
  readonly clock: Clock;
  readonly outage: OutageLog;
  readonly timeoutMs: number;
  /** Clock time by which `start()` gives up. */
  readonly deadline: number;
  /** Aborted by `engine.stop()`. */
  readonly signal: AbortSignal;
}

/**
 * Runs one step of `engine.start()`, trying again while it fails with `STORE_ERROR` or
 * `QUEUE_ERROR` (the store or queue is unreachable), waiting 100 ms doubling to 2 s between tries,
 * until `wait.deadline`. Then it rejects with the last error's code (`STORE_ERROR` / `QUEUE_ERROR`),
 * saying how long it waited, the last error as `cause`. Any other error rejects at once. The
 * failures are logged once per cause (`OutageLog`), and a success after them once.
 */
export async function untilReachable<T>(what: string, wait: StartWait, fn: () => Promise<T>): Promise<T> {
  let delay = FIRST_RETRY_MS;
  for (;;) {
    let failure: CairnError;
    try {
      const result = await fn();
      wait.outage.recovered(true);
      return result;
    } catch (error) {
      if (!isOutageError(error)) throw error;
      failure = error;
    }
    const left = wait.deadline - wait.clock.now();
    if (left <= 0 || wait.signal.aborted) {
      const why = wait.signal.aborted ? 'engine.stop() was called' : `startTimeoutMs is ${wait.timeoutMs}`;
      throw new CairnError(failure.code, `engine.start: ${what} still failing, gave up (${why}): ${failure.message}`, {
        cause: failure,
        data: { startTimeoutMs: Number.isFinite(wait.timeoutMs) ? wait.timeoutMs : null },
      });
    }
    wait.outage.failed(`engine.start: ${what} failed; retrying for up to ${wait.timeoutMs} ms (startTimeoutMs)`, failure);
    await wait.clock.sleep(Math.min(delay, left), wait.signal).catch(() => undefined);
    delay = Math.min(delay * 2, MAX_RETRY_MS);
  }
}
