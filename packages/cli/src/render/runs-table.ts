import type { RunStatus } from '@cairn/core';
import { type Colors, colors as makeColors } from './colors.js';
import { cell, formatShortTime } from './format.js';

/** What the runs table shows of a run (a `RunRecord` or a run summary both have it). */
export interface RunRow {
  id: string;
  workflow: string;
  status: RunStatus;
  createdAt: number;
}

const WORKFLOW = 15;
const STATUS = 9;

/**
 * Runs as an 80-column table, newest first as listed: the full id (to copy into `cairn show`), the
 * workflow (cut to 15 characters, escaped), the status and the creation time in UTC.
 */
export function renderRunsTable(runs: readonly RunRow[], options: { colors?: Colors } = {}): string {
  const c = options.colors ?? makeColors(false);
  const paint: Partial<Record<RunStatus, (s: string) => string>> = { completed: c.green, failed: c.red, cancelled: c.yellow, running: c.cyan, waiting: c.blue };
  const lines = [c.dim(`${'id'.padEnd(36)}  ${'workflow'.padEnd(WORKFLOW)}  ${'status'.padEnd(STATUS)}  created (UTC)`)];
  for (const run of runs) {
    const status = cell(run.status, STATUS);
    lines.push(`${cell(run.id, 36)}  ${cell(run.workflow, WORKFLOW)}  ${(paint[run.status] ?? ((s: string) => s))(status)}  ${formatShortTime(run.createdAt)}`);
  }
  if (runs.length === 0) lines.push(c.dim('(no runs match)'));
  return lines.join('\n');
}
