import type { AttemptRecord, StepKind, StepRecord } from '@cairn/core';

/** One bar of the timeline: an attempt of a task step, or the wait of a sleep, event or child. */
export interface TimelineBar {
  start: number;
  /** Absent while it is still going on (drawn up to the timeline's `end`). */
  end?: number;
  /** `attempt` bars: the attempt's status; `wait` bars: the step's status. */
  status: string;
  kind: 'attempt' | 'wait' | 'mark';
  /** The attempt number (attempt bars). */
  attempt?: number;
  /** The attempt's error message, if it failed. */
  error?: string;
}

/** One row of the timeline: a step and its bars. */
export interface TimelineLane {
  key: string;
  name: string;
  kind: StepKind;
  status: string;
  bars: TimelineBar[];
}

/** The run's timeline: its lanes over [start, end] (epoch milliseconds). */
export interface TimelineView {
  start: number;
  end: number;
  lanes: TimelineLane[];
}

const WAIT_KINDS: ReadonlySet<StepKind> = new Set(['sleep', 'event', 'child', 'select']);
const ENDED_STEP = new Set(['succeeded', 'failed']);

function laneBars(step: StepRecord, attempts: readonly AttemptRecord[]): TimelineBar[] {
  if (attempts.length > 0) {
    return attempts.map((a) => ({
      start: a.startedAt,
      ...(a.endedAt === undefined ? {} : { end: a.endedAt }),
      status: a.status,
      kind: 'attempt' as const,
      attempt: a.attempt,
      ...(a.error ? { error: a.error.message } : {}),
    }));
  }
  const ended = ENDED_STEP.has(step.status);
  if (WAIT_KINDS.has(step.kind) || !ended) {
    return [{ start: step.createdAt, ...(ended ? { end: step.updatedAt } : {}), status: step.status, kind: 'wait' }];
  }
  // now / random / uuid and steps recorded already finished: a point in time.
  return [{ start: step.createdAt, end: step.createdAt, status: step.status, kind: 'mark' }];
}

/**
 * Lays a run's steps and attempts out over time: one lane per step in recording order, an
 * attempt bar per attempt of a task step, one wait bar for a sleep, event, child or select
 * (open while it waits). `now` closes the open bars of a run that has not ended.
 */
export function timelineLanes(run: { createdAt: number; updatedAt: number; ended: boolean }, steps: readonly StepRecord[], attempts: readonly AttemptRecord[], now: number): TimelineView {
  const byStep = new Map<string, AttemptRecord[]>();
  for (const a of attempts) {
    const list = byStep.get(a.stepKey) ?? [];
    list.push(a);
    byStep.set(a.stepKey, list);
  }
  const lanes = [...steps]
    .sort((a, b) => a.seq - b.seq)
    .map((step) => ({
      key: step.key,
      name: step.name,
      kind: step.kind,
      status: step.status,
      bars: laneBars(step, (byStep.get(step.key) ?? []).sort((a, b) => a.attempt - b.attempt)),
    }));
  let end = run.ended ? run.updatedAt : Math.max(now, run.updatedAt);
  for (const lane of lanes) for (const bar of lane.bars) end = Math.max(end, bar.end ?? bar.start);
  return { start: run.createdAt, end, lanes };
}
