import type { Clock } from '../../clock/clock.js';
import { CairnError } from '../../errors/cairn-error.js';
import type { StepContext } from '../define/workflow-context.js';
import { untimedContext } from './untimed-context.js';

/** The result of one attempt of a step body. */
export type BodyResult = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Runs one attempt of a step body with its own abort signal, which fires when the attempt times
 * out (`STEP_TIMEOUT`) or `parent` aborts (cancellation, end of the execution), and is aborted
 * (`ENGINE_STOPPED`, "attempt settled") once the attempt settled, if nothing aborted it before. A
 * body that ignores its signal keeps running in the background, but its late result is never
 * recorded.
 * `timeoutMs` may be up to `MAX_DURATION_MS` (100 years): the clock's sleep honours it in full (the
 * system clock waits in slices of at most 2^31-1 ms), so a 25-day timeout does not fire at once.
 */
export function runStepBody(
  clock: Clock,
  fn: (step: StepContext) => unknown,
  identity: { runId: string; key: string; attempt: number },
  timeoutMs: number | undefined,
  parent: AbortSignal,
): Promise<BodyResult> {
  // Not itself async: an async function returning the inner promise would add its own hops.
  return timeoutMs === undefined ? runUntimed(fn, identity, parent) : runTimed(clock, fn, identity, timeoutMs, parent);
}

/** An attempt with a timeout: its signal is made at once (the timeout's sleep needs it). */
async function runTimed(
  clock: Clock,
  fn: (step: StepContext) => unknown,
  identity: { runId: string; key: string; attempt: number },
  timeoutMs: number,
  parent: AbortSignal,
): Promise<BodyResult> {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onParentAbort();
  else parent.addEventListener('abort', onParentAbort, { once: true });
  const body = Promise.resolve().then(() => fn({ ...identity, signal: controller.signal }));
  const timeout = clock.sleep(timeoutMs, controller.signal).then(() => {
    const error = new CairnError('STEP_TIMEOUT', `Step ${JSON.stringify(identity.key)} attempt ${identity.attempt} timed out after ${timeoutMs} ms`, {
      data: { key: identity.key, attempt: identity.attempt, timeoutMs },
    });
    controller.abort(error);
    throw error;
  });
  try {
    return { ok: true, value: await Promise.race([body, timeout]) };
  } catch (error) {
    return { ok: false, error };
  } finally {
    parent.removeEventListener('abort', onParentAbort);
    if (!controller.signal.aborted) controller.abort(settledError());
    // The losing contender may still reject later; nobody awaits it.
    body.catch(() => {});
    timeout.catch(() => {});
  }
}

function settledError(): CairnError {
  return new CairnError('ENGINE_STOPPED', 'attempt settled');
}

/**
 * An attempt without a timeout. Its signal is made only when the body reads it: most bodies never
 * do, and an AbortController per attempt (with the listener on `parent` and the abort event when
 * the attempt settles) was a large share of an inline step's CPU (docs/benchmarks.md). A signal
 * read later is in the state the eager one would be in: aborted with `parent`'s reason if `parent`
 * aborted while the attempt ran, with "attempt settled" once it settled.
 */
async function runUntimed(
  fn: (step: StepContext) => unknown,
  identity: { runId: string; key: string; attempt: number },
  parent: AbortSignal,
): Promise<BodyResult> {
  const attempt = new UntimedAttempt(identity, parent);
  try {
    return { ok: true, value: await Promise.resolve().then(() => fn(attempt.context)) };
  } catch (error) {
    return { ok: false, error };
  } finally {
    attempt.settle();
  }
}

/**
 * The state of one untimed attempt: its context and the signal made on first read. A class, so
 * that an attempt whose body never reads its signal makes no closure (closures per step were a
 * visible share of a step's CPU, issue 18).
 */
class UntimedAttempt {
  readonly context: StepContext;
  private controller: AbortController | undefined;
  private settled = false;
  // What the signal was aborted with, had it existed: fixed when the attempt settles.
  private settledReason: { reason: unknown } | undefined;
  private onParentAbort: (() => void) | undefined;

  constructor(
    identity: { runId: string; key: string; attempt: number },
    private readonly parent: AbortSignal,
  ) {
    this.context = untimedContext(identity, this);
  }

  /** The attempt's signal, made on first read (the context's `signal` getter). */
  signal(): AbortSignal {
    if (this.controller !== undefined) return this.controller.signal;
    const controller = new AbortController();
    this.controller = controller;
    if (this.settled) controller.abort(this.settledReason === undefined ? settledError() : this.settledReason.reason);
    else if (this.parent.aborted) controller.abort(this.parent.reason);
    else {
      this.onParentAbort = () => controller.abort(this.parent.reason);
      this.parent.addEventListener('abort', this.onParentAbort, { once: true });
    }
    return controller.signal;
  }

  /** The attempt settled: a signal made aborts now; one read later is made aborted. */
  settle(): void {
    this.settled = true;
    if (this.controller !== undefined) {
      if (this.onParentAbort !== undefined) this.parent.removeEventListener('abort', this.onParentAbort);
      if (!this.controller.signal.aborted) this.controller.abort(settledError());
    } else if (this.parent.aborted) {
      this.settledReason = { reason: this.parent.reason };
    }
  }
}
