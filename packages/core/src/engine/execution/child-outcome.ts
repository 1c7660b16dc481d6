/** `ctx.childOutcome`: a child's end as a value instead of a thrown `CHILD_FAILED`. */
import { CairnError } from '../../errors/cairn-error.js';
import type { ChildEndStatus, ChildOutcome } from '../define/workflow-context.js';

const END_STATUSES: readonly string[] = ['failed', 'cancelled', 'deleted'] satisfies ChildEndStatus[];

/**
 * Turns what `ctx.child` would deliver (the child's output, or the `CHILD_FAILED` error it would
 * throw, live or rebuilt from the history) into the value `ctx.childOutcome` resolves with. Pure:
 * the same recorded step gives the same outcome on every replay. `status` is read from the error's
 * `data.status` (written with it); an error recorded without one counts as `failed`.
 */
export function childOutcomeOf(result: { ok: true; value: unknown } | { ok: false; error: unknown }): ChildOutcome<unknown> {
  if (result.ok) return { ok: true, output: result.value };
  const error = CairnError.is(result.error)
    ? result.error
    : new CairnError('CHILD_FAILED', result.error instanceof Error ? result.error.message : 'child failed', { cause: result.error });
  const recorded = (error.data as { status?: unknown } | undefined)?.status;
  const status = typeof recorded === 'string' && END_STATUSES.includes(recorded) ? (recorded as ChildEndStatus) : 'failed';
  return { ok: false, status, error };
}
