import { isTerminalRunStatus, type Engine, type Json, type RunRecord, type StepRecord } from '@cairn/core';
import { actionSupport, type ActionSupport } from './engine-actions.js';
import { toRunSummary, type RunSummaryView } from './run-summary.js';
import { timelineLanes, type TimelineView } from './timeline-lanes.js';

/** Everything the run page shows, as the `/api/runs/:id` answer. */
export interface RunView {
  /** The whole record, payloads included. */
  run: RunRecord;
  steps: StepRecord[];
  state: Record<string, Json>;
  timeline: TimelineView;
  /** Steps waiting now: timers, events, children, with what they wait for. */
  waits: { key: string; kind: string; name: string; wakeAt?: number; childRunId?: string }[];
  /** Event steps: the messages the run received (payload = the step's output). */
  events: { key: string; name: string; status: string; at: number; payload?: Json }[];
  parent?: RunSummaryView;
  children: RunSummaryView[];
  /** What the buttons may do for this run (the engine's support and the run's status). */
  actions: ActionSupport;
}

// A run page lists at most this many children (a fan-out of thousands is a list query away).
const MAX_CHILDREN = 100;
// Event waits are recorded as steps named 'event:<name>'.
const EVENT_PREFIX = 'event:';

async function childrenOf(engine: Engine, run: RunRecord, steps: readonly StepRecord[]): Promise<RunSummaryView[]> {
  const ids = [...new Set(steps.flatMap((s) => (s.childRunId === undefined ? [] : [s.childRunId])))].slice(0, MAX_CHILDREN);
  const found = await Promise.all(ids.map((id) => engine.getRun(id)));
  return found.flatMap((child) => (child && child.parent?.runId === run.id ? [toRunSummary(child)] : []));
}

/** Reads what the run page of `runId` needs, or `undefined` when there is no such run. */
export async function runView(engine: Engine, runId: string, now: number): Promise<RunView | undefined> {
  const run = await engine.getRun(runId);
  if (!run) return undefined;
  const [steps, state, attempts] = await Promise.all([engine.steps(runId), engine.state(runId), engine.history(runId)]);
  const parentRecord = run.parent ? await engine.getRun(run.parent.runId) : undefined;
  const children = await childrenOf(engine, run, steps);
  const ended = isTerminalRunStatus(run.status);
  const support = actionSupport(engine);
  return {
    run,
    steps,
    state,
    timeline: timelineLanes({ createdAt: run.createdAt, updatedAt: run.updatedAt, ended }, steps, attempts, now),
    waits: steps
      .filter((s) => s.status === 'waiting' || s.status === 'retry_wait' || s.status === 'scheduled')
      .map((s) => ({ key: s.key, kind: s.kind, name: s.name, ...(s.wakeAt === undefined ? {} : { wakeAt: s.wakeAt }), ...(s.childRunId === undefined ? {} : { childRunId: s.childRunId }) })),
    events: steps
      .filter((s) => s.kind === 'event')
      .map((s) => ({
        key: s.key,
        name: s.name.startsWith(EVENT_PREFIX) ? s.name.slice(EVENT_PREFIX.length) : s.name,
        status: s.status,
        at: s.updatedAt,
        ...(s.status === 'succeeded' && s.output !== undefined ? { payload: s.output } : {}),
      })),
    ...(parentRecord ? { parent: toRunSummary(parentRecord) } : {}),
    children,
    actions: {
      cancel: !ended,
      retry: support.retry && (run.status === 'failed' || run.status === 'cancelled'),
      fork: support.fork && steps.length > 0,
    },
  };
}
