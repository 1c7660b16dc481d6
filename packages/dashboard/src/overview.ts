import type { Engine, RunQuery, RunSummary } from '@cairn/core';

const HOUR_MS = 3_600_000;
const DAY_HOURS = 24;
const PAGE = 1000;

/** Counts of runs created in a window, by how they stand now. */
export interface OverviewCounts {
  /** Runs created in the window. */
  started: number;
  /** Of them, the ones that completed. */
  completed: number;
  /** Of them, the ones that failed. */
  failed: number;
  /** Of them, the ones that were cancelled. */
  cancelled: number;
}

/** One hour of the last day: the runs created in it, by outcome. */
export interface OverviewHour extends OverviewCounts {
  /** The hour's start (epoch ms). */
  start: number;
}

/** One workflow on the overview. */
export interface WorkflowOverview {
  workflow: string;
  lastHour: OverviewCounts;
  lastDay: OverviewCounts;
  /** The last 24 hours, oldest first. */
  hours: OverviewHour[];
  /** Creation to completion of the runs created in the last day that completed (ms); absent when none did. */
  durationMs?: { p50: number; p95: number; of: number };
}

/** Runs failed in the last day with one error code. */
export interface FailureGroup {
  /** The error's code, or its class name when it has none. */
  code: string;
  count: number;
  /** The workflows these runs belong to, by name. */
  workflows: string[];
  /** The latest failure's time (the run's last update). */
  lastAt: number;
}

/** `GET /api/overview`: the dashboard's home. */
export interface Overview {
  /** When it was computed (epoch ms). */
  now: number;
  workflows: WorkflowOverview[];
  failures: FailureGroup[];
  backlog: {
    /** Active runs due now: pending, or waiting with a wake-up time that has passed. */
    due: number;
    /** Runs waiting (for a timer, an event, a child or a slot). */
    waiting: number;
    /** The waiting run created longest ago, if any. */
    oldestWaiting?: { runId: string; workflow: string; createdAt: number };
  };
  /**
   * True when a bound cut a scan short (`maxRuns` runs created in the last day, or as many active
   * runs): the figures then cover the newest runs only.
   */
  truncated: boolean;
  /** How many runs were read to compute it. */
  scanned: number;
}

/** Bounds of `overview`. */
export interface OverviewOptions {
  /** The clock's time (default `Date.now()`). */
  now?: number;
  /** Most runs read per scan (default 20,000): the runs created in the last day, and the active runs. */
  maxRuns?: number;
}

/** Reads `query` page by page, newest first, up to `max` runs; true when more were left. */
async function scan(engine: Engine, query: RunQuery, max: number, each: (run: RunSummary) => void): Promise<{ read: number; truncated: boolean }> {
  let cursor: string | undefined;
  let read = 0;
  for (;;) {
    const page = await engine.listRuns({ ...query, limit: Math.min(PAGE, max - read), ...(cursor === undefined ? {} : { cursor }) });
    for (const run of page.runs) each(run);
    read += page.runs.length;
    if (page.nextCursor === undefined) return { read, truncated: false };
    if (read >= max) return { read, truncated: true };
    cursor = page.nextCursor;
  }
}

const emptyCounts = (): OverviewCounts => ({ started: 0, completed: 0, failed: 0, cancelled: 0 });

function count(counts: OverviewCounts, run: RunSummary): void {
  counts.started += 1;
  if (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled') counts[run.status] += 1;
}

/** The value at `q` (0..1) of sorted numbers, nearest rank. */
function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/**
 * What the overview page shows, from `listRuns` alone (so every backend serves it the same): the
 * runs created in the last 24 hours per workflow and hour by outcome, their creation-to-completion
 * time at p50 and p95, the failures among them by error code, and the active runs that are due or
 * waiting. Bounded: at most `maxRuns` runs per scan, newest first (`truncated` says when a bound was
 * reached). A run counts in the hour it was created, by its status now.
 */
export async function overview(engine: Engine, options: OverviewOptions = {}): Promise<Overview> {
  const now = options.now ?? Date.now();
  const maxRuns = options.maxRuns ?? 20_000;
  const firstHour = Math.floor(now / HOUR_MS) * HOUR_MS - (DAY_HOURS - 1) * HOUR_MS;
  const dayStart = now - DAY_HOURS * HOUR_MS;
  const byWorkflow = new Map<string, WorkflowOverview & { durations: number[] }>();
  const failures = new Map<string, FailureGroup & { names: Set<string> }>();

  const recent = await scan(engine, { createdAfter: dayStart }, maxRuns, (run) => {
    let entry = byWorkflow.get(run.workflow);
    if (entry === undefined) {
      entry = {
        workflow: run.workflow,
        lastHour: emptyCounts(),
        lastDay: emptyCounts(),
        hours: Array.from({ length: DAY_HOURS }, (_, i) => ({ start: firstHour + i * HOUR_MS, ...emptyCounts() })),
        durations: [],
      };
      byWorkflow.set(run.workflow, entry);
    }
    // The chart's hours are whole clock hours: the oldest begins up to an hour after the day's start.
    if (run.createdAt >= firstHour && run.createdAt < firstHour + DAY_HOURS * HOUR_MS)
      count(entry.hours[Math.floor((run.createdAt - firstHour) / HOUR_MS)] as OverviewHour, run);
    count(entry.lastDay, run);
    if (run.createdAt >= now - HOUR_MS) count(entry.lastHour, run);
    if (run.status === 'completed') entry.durations.push(run.updatedAt - run.createdAt);
    if (run.status === 'failed') {
      const code = run.error?.code ?? run.error?.name ?? 'Error';
      let group = failures.get(code);
      if (group === undefined) {
        group = { code, count: 0, workflows: [], lastAt: 0, names: new Set() };
        failures.set(code, group);
      }
      group.count += 1;
      group.names.add(run.workflow);
      group.lastAt = Math.max(group.lastAt, run.updatedAt);
    }
  });

  const backlog: Overview['backlog'] = { due: 0, waiting: 0 };
  const active = await scan(engine, { status: ['pending', 'waiting'] }, maxRuns, (run) => {
    if (run.status === 'pending' || (run.wakeAt !== undefined && run.wakeAt <= now)) backlog.due += 1;
    if (run.status !== 'waiting') return;
    backlog.waiting += 1;
    if (backlog.oldestWaiting === undefined || run.createdAt < backlog.oldestWaiting.createdAt) {
      backlog.oldestWaiting = { runId: run.id, workflow: run.workflow, createdAt: run.createdAt };
    }
  });

  const workflows = [...byWorkflow.values()]
    .sort((a, b) => (a.workflow < b.workflow ? -1 : a.workflow > b.workflow ? 1 : 0))
    .map(({ durations, ...entry }): WorkflowOverview => {
      if (durations.length === 0) return entry;
      durations.sort((a, b) => a - b);
      return { ...entry, durationMs: { p50: quantile(durations, 0.5), p95: quantile(durations, 0.95), of: durations.length } };
    });
  return {
    now,
    workflows,
    failures: [...failures.values()]
      .map(({ names, ...group }) => ({ ...group, workflows: [...names].sort() }))
      .sort((a, b) => b.count - a.count || (a.code < b.code ? -1 : 1)),
    backlog,
    truncated: recent.truncated || active.truncated,
    scanned: recent.read + active.read,
  };
}
