import type { Clock } from '../clock/clock.js';
import { CairnError } from '../errors/cairn-error.js';
import type { StepContext } from './workflow-context.js';

/** The result of one attempt of a step body. */
export type BodyResult = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Runs one attempt of a step body with its own abort signal, which fires when the attempt times
 * out (`STEP_TIMEOUT`) or `parent` aborts (cancellation, end of the execution). A body that ignores
 * its signal keeps running in the background, but its late result is never recorded.
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
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onParentAbort();
  else parent.addEventListener('abort', onParentAbort, { once: true });
  const body = Promise.resolve().then(() => fn({ ...identity, signal: controller.signal }));
  const contenders: Promise<unknown>[] = [body];
  if (timeoutMs !== undefined) {
    contenders.push(
      clock.sleep(timeoutMs, controller.signal).then(() => {
        const error = new CairnError('STEP_TIMEOUT', `Step ${JSON.stringify(identity.key)} attempt ${identity.attempt} timed out after ${timeoutMs} ms`, {
          data: { key: identity.key, attempt: identity.attempt, timeoutMs },
        });
        controller.abort(error);
        throw error;
      }),
    );
  }
  try {
    return { ok: true, value: await Promise.race(contenders) };
  } catch (error) {
    return { ok: false, error };
  } finally {
    parent.removeEventListener('abort', onParentAbort);
    if (!controller.signal.aborted) controller.abort(new CairnError('ENGINE_STOPPED', 'attempt settled'));
    // The losing contender may still reject later; nobody awaits it.
    for (const p of contenders) p.catch(() => {});
  }
}
