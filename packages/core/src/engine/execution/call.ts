// One primitive call as an execution tracks it, the outcome it waits to hand over, and the sentinels
// that end a primitive without an outcome. Separate from the replay so the parts of an execution
// (task steps, waits, children) import these without importing each other.

/**
 * The probe key of a pre-deploy check's replay (`checkRuns`): no call has it, so the replay never
 * runs a body; it writes nothing and ends with a verdict instead of suspending.
 */
export const CHECK_PROBE_KEY = '$check';

// Returned by primitives that cannot continue in this execution; never settles, so the handler
// simply stops there (the next execution replays past it).
export const NEVER: Promise<never> = new Promise(() => {});
// Thrown inside a primitive to unwind it when it must wait; turned into NEVER by `guard`.
export const SUSPEND = Symbol('suspend');

/**
 * One primitive call: its number in call order, the delivery turn it reserved (if any), and, once
 * its outcome is ready, that outcome and how to hand it to the code. A class rather than closures
 * per call: those were a visible share of an inline step's CPU (issue 18).
 */
export class Call {
  turn: number | undefined = undefined;
  /** The outcome, once ready: handed over in its turn (see `Replay.handOver`). */
  delivery: Delivery | undefined = undefined;
  resolve: (value: unknown) => void = ignore;
  reject: (error: unknown) => void = ignore;
  /**
   * Set by a primitive just before it suspends, when it can pick up where it stopped: runs its wait
   * again from its latest record (`Site.recorded`), as a replay reaching it would. A kept execution
   * (`StickyExecutions`) resumes every suspended call through it; a call without it cannot be kept.
   */
  resume: (() => Promise<Delivery>) | undefined = undefined;
  /** What the primitive makes of its wait's outcome (`ctx.childOutcome`: a value), applied to a resumed wait's too. */
  map: ((delivery: Delivery) => Delivery) | undefined = undefined;

  constructor(readonly no: number) {}
}

function ignore(): void {}

/**
 * A primitive's outcome and the turn in which workflow code may see it. `key`: the recorded step it
 * replays (its turn waits for it).
 */
export type Delivery = { turn: number; key?: string; onDeliver?: () => void } & ({ ok: true; value: unknown } | { ok: false; error: unknown });
