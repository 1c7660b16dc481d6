// When the code of an execution is quiet (no turn can start): whether the replay left the recorded
// path (a recorded call the quiet code will not make), an outcome recorded without a turn goes
// first, a check's replay ends with its verdict, or every branch waits on the store and the
// execution suspends. Split from replay.ts (the decision only reads the replay and settles it).
import { toErrorRecord } from '../../errors/error-record-codec.js';
import type { StepRecord } from '../../model/step.js';
import type { SuspendReason } from '../../observe/lifecycle-events.js';
import type { TurnScheduler } from './turn-scheduler.js';
import type { Call } from './call.js';
import { type Divergence, recordedCall } from './divergence.js';
import type { Outcome } from './outcome.js';
import type { CairnError } from '../../errors/cairn-error.js';

/** What the quiet decision reads of a Replay (replay.ts), and what it may call on it. */
export interface QuietReplay {
  readonly closed: boolean;
  readonly finishing: boolean;
  readonly inflight: number;
  readonly waiting: boolean;
  readonly checking: boolean;
  readonly probeKey?: string | undefined;
  readonly turns: TurnScheduler<Call>;
  readonly calledKeys: ReadonlySet<string>;
  readonly catchUpWaiters: readonly unknown[];
  readonly recorded: ReadonlyMap<string, StepRecord>;
  readonly wakeTimes: readonly number[];
  readonly suspendReasons: ReadonlySet<SuspendReason>;
  releaseUntimed(): boolean;
  firstUnmade(): StepRecord | undefined;
  diverge(divergence: Omit<Divergence, 'runId' | 'turn' | 'expected' | 'actual'>, detail?: string): CairnError;
  settle(outcome: Outcome): void;
}

/** The code is quiet and no turn can start: suspend if every branch waits on the store. */
export function settleIfQuiet(r: QuietReplay): void {
  if (r.closed || r.finishing) return;
  if (r.inflight > 0) {
    failOffPath(r);
    return;
  }
  // Nothing in flight and no branch waiting: the handler is awaiting its own async work
  // between primitives and will call the next one (or return) later. A probe must wait for
  // it like an execution does, not declare the queued step unreachable.
  if (!r.waiting) return;
  if (r.checking) {
    // Every branch waits for what is not recorded yet: compatible if every recorded call was made.
    const unmade = r.firstUnmade();
    if (unmade === undefined) r.settle({ kind: 'checked' });
    else r.diverge({ reason: 'missing-call', seq: unmade.seq, recorded: recordedCall(unmade), called: null });
    return;
  }
  if (r.probeKey !== undefined) {
    r.settle({ kind: 'probe-miss' });
    return;
  }
  const wakeAt = r.wakeTimes.length === 0 ? undefined : Math.min(...r.wakeTimes);
  r.settle({ kind: 'suspended', wakeAt, reasons: [...r.suspendReasons] });
}

/**
 * Quiet with calls in flight: the next recorded turn waits for a call the code has not made,
 * although the code is quiet and, with other outcomes still to come, could only make it in a turn
 * (a call from outside any turn is refused then): this replay has left the recorded path. Fail
 * instead of holding the lease for ever.
 */
function failOffPath(r: QuietReplay): void {
  let missing = r.turns.awaitedNext().find((key) => !r.calledKeys.has(key));
  if (missing === undefined && r.catchUpWaiters.length > 0 && r.turns.turn >= r.turns.maxRecorded && !r.turns.hasOutcomesComing()) {
    // An outcome the history holds without a turn goes first (a history from before turns).
    if (r.releaseUntimed()) return;
    // New outcomes wait for recorded calls that the quiet code will not make.
    missing = r.firstUnmade()?.key;
  }
  if (missing === undefined && r.turns.turn < r.turns.maxRecorded && r.turns.nextIsEmpty()) {
    // The history delivered later turns, but nothing this replay has made goes in the next
    // one: the first execution saw an outcome there that no step records (a state read or
    // write), and this code, quiet now, did not make that call. Nothing can start that turn.
    if (r.probeKey !== undefined && !r.checking) {
      r.settle({ kind: 'probe-miss' });
      return;
    }
    const error = r.diverge(
      { reason: 'missing-call', seq: null, recorded: null, called: null },
      `the history's turn ${r.turns.turn + 1} handed the code an outcome no step records (a ctx.state or ctx.setState call), but this replay never made that call (it is quiet in turn ${r.turns.turn}). The workflow code changed under a running run: guard the change with ctx.patched(id), or register the new code as a new version (see docs/versioning.md).`,
    );
    r.settle({ kind: 'failed', error: toErrorRecord(error) });
    return;
  }
  if (missing === undefined) return;
  if (r.probeKey !== undefined && !r.checking) {
    r.settle({ kind: 'probe-miss' });
    return;
  }
  const step = r.recorded.get(missing);
  const error = r.diverge({ reason: 'missing-call', seq: step?.seq ?? null, recorded: recordedCall(step), called: null });
  r.settle({ kind: 'failed', error: toErrorRecord(error) });
}
