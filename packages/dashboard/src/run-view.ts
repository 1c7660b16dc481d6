import { isTerminalRunStatus, type Engine, type RunRecord, type RunSummary, type RunTimeline } from '@cairn/core';
import { toRunSummary, buildRunTimeline, type TimelineChild } from '@cairn/core/backend';
import { type GraphView, graphView } from './graph-view.js';

/** Everything the run page shows, as the `/api/runs/:id` answer. */
export interface RunView {
  /** The whole record, payloads included (and any field an engine adds, such as how it was forked). */
  run: RunRecord;
  /** The run's timeline (`RunTimeline`, as `Engine.timeline` gives it): steps, attempts, waits, children, state. */
  timeline: RunTimeline;
  parent?: RunSummary;
  /** The runs it started, with how (`child`, `detached`, `successor`). */
  children: (RunSummary & { relation: TimelineChild['relation'] })[];
  /** For a graph run (`@cairn/graph`): its drawing, each node's state and the approval gates waiting for an answer. */
  graph?: GraphView;
  /**
   * Which actions apply to the run as it is: cancel while it runs, pause while it runs and is not
   * paused (a store without pause answers the action with PAUSE_UNSUPPORTED), resume while it is
   * paused, retry once it failed or was cancelled, fork once it has steps.
   */
  actions: { cancel: boolean; pause: boolean; resume: boolean; retry: boolean; fork: boolean };
}

// A run page lists at most this many children (a fan-out of thousands is a list query away).
const MAX_CHILDREN = 100;

/**
 * Reads what the run page of `runId` needs, or `undefined` when there is no such run: the record,
 * steps, attempts and state (the four reads `Engine.timeline` makes, so the whole record comes
 * with them at no extra cost), the parent, and the children the run started.
 */
export async function runView(engine: Engine, runId: string): Promise<RunView | undefined> {
  const run = await engine.getRun(runId);
  if (!run) return undefined;
  const [steps, attempts, state] = await Promise.all([engine.steps(runId), engine.history(runId), engine.state(runId)]);
  const timeline = buildRunTimeline(run, steps, attempts, state);
  const related = timeline.children.slice(0, MAX_CHILDREN);
  const [parent, ...children] = await Promise.all([run.parent ? engine.getRun(run.parent.runId) : undefined, ...related.map((c) => engine.getRun(c.runId))]);
  const graph = graphView(steps);
  return {
    run,
    timeline,
    ...(graph ? { graph } : {}),
    ...(parent ? { parent: toRunSummary(parent) } : {}),
    children: children.flatMap((child, i) => (child ? [{ ...toRunSummary(child), relation: (related[i] as TimelineChild).relation }] : [])),
    actions: {
      cancel: !isTerminalRunStatus(run.status),
      pause: !isTerminalRunStatus(run.status) && run.paused === undefined,
      resume: !isTerminalRunStatus(run.status) && run.paused !== undefined,
      retry: run.status === 'failed' || run.status === 'cancelled',
      fork: steps.length > 0,
    },
  };
}
