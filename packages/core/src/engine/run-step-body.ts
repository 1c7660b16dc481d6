import type { Clock } from '../clock/clock.js';
import { CairnError } from '../errors/cairn-error.js';
import type { StepContext } from './workflow-context.js';

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
export async function runStepBody(
  clock: Clock,
  fn: (step: StepContext) => unknown,
  identity: { runId: string; key: string; attempt: number },
  timeoutMs: number | undefined,
  parent: AbortSignal,
): Promise<BodyResult> {
  if (timeoutMs === undefined) return runUntimed(fn, identity, parent);
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
  let controller: AbortController | undefined;
  let settled = false;
  // What the signal was aborted with, had it existed: fixed when the attempt settles.
  let settledReason: { reason: unknown } | undefined;
  const onParentAbort = () => controller?.abort(parent.reason);
  const signal = (): AbortSignal => {
    if (controller !== undefined) return controller.signal;
    controller = new AbortController();
    if (settled) controller.abort(settledReason === undefined ? settledError() : settledReason.reason);
    else if (parent.aborted) controller.abort(parent.reason);
    else parent.addEventListener('abort', onParentAbort, { once: true });
    return controller.signal;
  };
  const context: StepContext = {
    ...identity,
    get signal() {
      return signal();
    },
  };
  try {
    return { ok: true, value: await Promise.resolve().then(() => fn(context)) };
  } catch (error) {
    return { ok: false, error };
  } finally {
    settled = true;
    if (controller !== undefined) {
      parent.removeEventListener('abort', onParentAbort);
      if (!controller.signal.aborted) controller.abort(settledError());
    } else if (parent.aborted) {
      settledReason = { reason: parent.reason };
    }
  }
}
