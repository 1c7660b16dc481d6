import { isTerminalRunStatus, type RunStatus } from '@cairn/core';
import { type Colors, colors as makeColors } from './colors.js';
import { cell, clip, formatShortTime, formatTags } from './format.js';

/** What the runs table shows of a run (a `RunRecord` or a run summary both have it). */
export interface RunRow {
  id: string;
  workflow: string;
  status: RunStatus;
  createdAt: number;
  /** Set while the run is paused: the status column says `paused` (the status is in `--json`). */
  paused?: unknown;
  /** The run's tags: shown on a line of their own under the run. */
  tags?: Record<string, string>;
}

const WORKFLOW = 15;
const STATUS = 9;

/**
 * Runs as an 80-column table, newest first as listed: the full id (to copy into `cairn show`), the
 * workflow (cut to 15 characters, escaped), the status (`paused` for a paused run that has not
 * ended) and the creation time in UTC.
 */
export function renderRunsTable(runs: readonly RunRow[], options: { colors?: Colors } = {}): string {
  const c = options.colors ?? makeColors(false);
  const paint: Partial<Record<RunStatus | 'paused', (s: string) => string>> = {
    completed: c.green,
    failed: c.red,
    cancelled: c.yellow,
    running: c.cyan,
    waiting: c.blue,
    paused: c.magenta,
  };
  const lines = [c.dim(`${'id'.padEnd(36)}  ${'workflow'.padEnd(WORKFLOW)}  ${'status'.padEnd(STATUS)}  created (UTC)`)];
  for (const run of runs) {
    // A paused run that has not ended shows as paused: what an operator looks for first.
    const shown = run.paused !== undefined && !isTerminalRunStatus(run.status) ? 'paused' : run.status;
    const status = cell(shown, STATUS);
    lines.push(`${cell(run.id, 36)}  ${cell(run.workflow, WORKFLOW)}  ${(paint[shown] ?? ((s: string) => s))(status)}  ${formatShortTime(run.createdAt)}`);
    // Under the run, within the 80 columns: tags can be long, and a table column would cut them to nothing.
    if (run.tags !== undefined && Object.keys(run.tags).length > 0) lines.push(c.dim(`  tags ${clip(formatTags(run.tags), 72)}`));
  }
  if (runs.length === 0) lines.push(c.dim('(no runs match)'));
  return lines.join('\n');
}
