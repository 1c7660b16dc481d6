// What one push asks for, as the body of the request carries it (JSON), and what the handler
// answers. The handler reads nothing else from the request: a push cannot start, cancel or read a
// run; it only moves one that is in the store already.
import type { PushedStep, StepJob } from '@cairn/core/backend';

/** One unit of work a push names. */
export type PushUnit =
  /** Execute the run until it suspends, ends, or the budget nears (`engine.pushed.executeOnce`). */
  | { kind: 'run'; runId: string }
  /** Run one attempt of a queued step (`engine.pushed.executeStep`); `job` as a previous answer gave it. */
  | { kind: 'step'; job: StepJob }
  /** Execute due runs, one after the other, until none is due or the budget nears. */
  | { kind: 'tick' };

/** What the pusher should push next, from an answer: now, or after `delayMs`. */
export type NextPush = { kind: 'run'; runId: string } | { kind: 'step'; job: StepJob; delayMs?: number };

/** The answer to a push (JSON, status 200). */
export interface PushAnswer {
  /** The unit's kind. */
  kind: PushUnit['kind'];
  /**
   * For a run: how this push left it (see `PushedRunResult.status`). For a step: `done`. For a tick:
   * `idle` (nothing due was left) or `continue` (the budget ran out with work left: tick again).
   */
  status: string;
  /** The run (run and step pushes). */
  runId?: string;
  /** When the run is due again (a run push that left it waiting with a timer). */
  wakeAt?: number;
  /** Runs a tick executed. */
  executed?: number;
  /** What to push next: the run again (`continue`), a step it dispatched, the run a step woke. */
  next: NextPush[];
}

/** A parse failure: the body is not a push this handler knows. */
export class BadPush extends Error {}

/** Parses a push body (already authenticated); throws `BadPush` for anything but a known unit. */
export function parsePushUnit(text: string): PushUnit {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadPush('the body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadPush('the body is not a JSON object');
  const unit = value as Record<string, unknown>;
  if (unit.kind === 'run' && typeof unit.runId === 'string') return { kind: 'run', runId: unit.runId };
  if (unit.kind === 'step' && typeof unit.job === 'object' && unit.job !== null) return { kind: 'step', job: unit.job as StepJob };
  if (unit.kind === 'tick') return { kind: 'tick' };
  throw new BadPush("the body names no unit of work: { kind: 'run', runId } | { kind: 'step', job } | { kind: 'tick' }");
}

/** The next pushes for the steps a push dispatched. */
export function stepPushes(steps: readonly PushedStep[]): NextPush[] {
  return steps.map(({ job, delayMs }) => (delayMs === undefined ? { kind: 'step', job } : { kind: 'step', job, delayMs }));
}
