// What a NON_DETERMINISM error says about where a replay left its run's history: the position and
// turn, what the history recorded there, what the code called instead, and the line of the call.
// One shape for the run-time error, the pre-deploy check and replayed fixtures (issue 27, part 4),
// so `cairn show`, the dashboard and a test read the same fields.
import { CairnError } from '../../errors/cairn-error.js';
import type { Json } from '../../model/json.js';
import type { StepKind, StepRecord } from '../../model/step.js';

/** Why a replay left the recorded path. */
export type DivergenceReason =
  /** The code made a different call (kind or key) at a position the history holds. */
  | 'different-call'
  /** The code went quiet (or suspended) without making a call the history holds. */
  | 'missing-call'
  /** The handler returned or threw before reaching a call the history holds. */
  | 'ended-early'
  /** A recorded outcome was delivered in an earlier turn than the replay reached its call. */
  | 'late-call'
  /** A primitive was called after awaiting something other than a primitive, with branches in flight. */
  | 'untracked-await'
  /** `ctx.startChild` met a child step the history holds as an awaited `ctx.child`. */
  | 'different-child';

/** One call, as recorded or as made by the code. */
export interface DivergenceCall {
  kind: StepKind;
  key: string;
  /** The name the code gave it (the key without its occurrence suffix). */
  name: string;
}

/**
 * The structured `data` of a NON_DETERMINISM error (`CairnError.data`): enough to find the line to
 * change and to choose between a patch (`ctx.patched`) and a new version.
 */
export interface Divergence {
  runId: string;
  reason: DivergenceReason;
  /** The call position (0, 1, ...) where the replay and the history part. */
  seq: number | null;
  /** The delivery turn the replay had reached. */
  turn: number;
  /** What the history holds at that position; `null` when it holds nothing there. */
  recorded: DivergenceCall | null;
  /** What the code called there instead; `null` when it made no call (it ended or went quiet). */
  called: DivergenceCall | null;
  /** `file:line:column` of the code's call, from the stack, where one was found. */
  location?: string;
  /**
   * The history was recorded by a Cairn build before delivery turns (before 0.2.0) and its
   * concurrent branches were replayed in the order their steps completed: a divergence then may
   * come from that order rather than from changed code.
   */
  historyBeforeTurns?: true;
  /** Kept for readers of the first format: the recorded key (`recorded.key`) and the called one. */
  expected: string | null;
  actual: string | null;
}

/** A recorded step as a divergence names it. */
export function recordedCall(step: StepRecord | undefined): DivergenceCall | null {
  return step === undefined ? null : { kind: step.kind, key: step.key, name: step.name };
}

/** The error a replay fails with, its message written from the divergence. */
export function divergenceError(divergence: Divergence, detail?: string): CairnError {
  return new CairnError('NON_DETERMINISM', `Run ${divergence.runId}: ${detail ?? describeDivergence(divergence)}`, {
    data: divergence as unknown as Json,
  });
}

/** One sentence (and advice) for a divergence: what the history holds, what the code did instead. */
export function describeDivergence(d: Divergence): string {
  const at = d.seq === null ? '' : ` at #${d.seq}`;
  const recorded = d.recorded === null ? 'nothing' : `${d.recorded.kind} ${JSON.stringify(d.recorded.key)}`;
  const called = d.called === null ? '' : `${d.called.kind} ${JSON.stringify(d.called.key)}`;
  const where = d.location === undefined ? '' : ` (${d.location})`;
  let what: string;
  switch (d.reason) {
    case 'different-call':
      what = `the code called ${called}${where}${at}, but the history has ${recorded} there`;
      break;
    case 'missing-call':
      what = `the history has ${recorded}${at}, but this replay never called it (it is quiet in turn ${d.turn})`;
      break;
    case 'ended-early':
      what = `the workflow ended before calling ${recorded}${at}, which the history has`;
      break;
    case 'late-call':
      what = `the history delivered ${recorded} in an earlier turn than this replay reached its call (turn ${d.turn})`;
      break;
    case 'different-child':
      what = `ctx.startChild ${called}${where} meets a child step the history holds as an awaited ctx.child`;
      break;
    default:
      what = `a primitive${where} was called after the workflow awaited something other than a Cairn primitive while other branches were in flight`;
  }
  if (d.historyBeforeTurns) {
    return `${what}. This run was recorded by a Cairn build before delivery turns (before 0.2.0); its concurrent branches were replayed in the order their steps completed, which this code does not follow. Let the run finish on the old build, or retry it from an earlier step (cairn fork).`;
  }
  if (d.reason === 'untracked-await') return `${what}; its place among their calls cannot be replayed. Move that asynchronous work into a ctx.step.`;
  if (d.recorded?.kind === 'patch') {
    return `${what}. The history holds a patch marker: keep ctx.patched(${JSON.stringify(d.recorded.name)}) (or ctx.deprecatePatch) at that place until every run that recorded it has ended.`;
  }
  return `${what}. The workflow code changed under a running run: guard the change with ctx.patched(id), or register the new code as a new version (see docs/versioning.md).`;
}

// Frames of Cairn's own engine (source or build) and of Node itself: the caller is the first other one.
const INTERNAL_FRAME = /[\\/](core[\\/](src|dist)[\\/]engine)[\\/]|node:internal|\(native\)|<anonymous>/;

/**
 * `file:line:column` of the workflow code's call that is on the stack now (the first frame outside
 * the engine), or `undefined`. Only computed for an error: a stack per call would cost every step.
 */
export function callerLocation(): string | undefined {
  const stack = new Error().stack?.split('\n').slice(1) ?? [];
  for (const line of stack) {
    if (INTERNAL_FRAME.test(line)) continue;
    const match = /\(?((?:file:\/\/)?[^\s()]+:\d+:\d+)\)?\s*$/.exec(line.trim());
    if (match?.[1] !== undefined) return match[1].replace(/^file:\/\//, '');
  }
  return undefined;
}
