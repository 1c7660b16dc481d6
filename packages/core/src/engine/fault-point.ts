/**
 * The engine boundaries where a test can simulate a crash (see `@cairn/core/testing`):
 * - `after-claim`: the lease is held, nothing replayed yet;
 * - `after-step-body`: a step body returned (or threw), its result not yet written;
 * - `before-checkpoint` / `after-checkpoint`: around every durable write of a step result or run
 *   outcome;
 * - `before-ack`: the work is done, the queue job not yet acknowledged;
 * - `bulk-page`: a bulk operation acted on a page of runs, its progress not yet stored (`runId` is
 *   the operation's id). Not an execution's point, so not in `FAULT_POINTS`.
 */
export type FaultPoint = 'after-claim' | 'after-step-body' | 'before-checkpoint' | 'after-checkpoint' | 'before-ack' | 'bulk-page';

/** Every fault point, in the order an execution meets them. */
export const FAULT_POINTS: readonly Exclude<FaultPoint, 'bulk-page'>[] = [
  'after-claim',
  'after-step-body',
  'before-checkpoint',
  'after-checkpoint',
  'before-ack',
];

/** Where a fault point was hit. */
export interface FaultSite {
  point: FaultPoint;
  runId: string;
  /** The step key, for step-level points. */
  stepKey?: string;
}

/**
 * Called by the engine at every fault point. Throwing simulates a process crash at that point: the
 * engine abandons the execution without any further write, exactly as if the process had died.
 */
export interface FaultInjector {
  hit(site: FaultSite): void;
}

/**
 * The injector of an engine given none: hits nothing. The engine skips its fault points when it
 * has this one (building the site of each point was a visible share of an inline step's CPU).
 */
export const NO_FAULTS: FaultInjector = Object.freeze({ hit: () => {} });
