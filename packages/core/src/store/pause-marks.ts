import type { PauseScope, RunPause } from '../model/pause.js';
import { isTerminalRunStatus, type RunRecord } from '../model/run.js';
import { runConflict, runNotFound } from './write-rejections.js';

/**
 * The run `PauseStore.pauseRun` / `resumeRun` may change, or their refusal: `RUN_NOT_FOUND` when
 * it does not exist, `RUN_CONFLICT` when it ended (nothing may change an ended run). Every backend
 * refuses the same way.
 */
export function pausableRun(runId: string, run: RunRecord | undefined): RunRecord {
  if (run === undefined) throw runNotFound(runId);
  if (isTerminalRunStatus(run.status)) throw runConflict(runId, run.status, ['pending', 'running', 'waiting']);
  return run;
}

/** The mark `pauseRun` writes (`RunRecord.paused`): the reason kept only when given. */
export function pauseMark(pause: { scope: PauseScope; reason?: string }, now: number): RunPause {
  return pause.reason === undefined ? { at: now, scope: pause.scope } : { at: now, scope: pause.scope, reason: pause.reason };
}

/** Whether `resumeRun(…, scope)` lifts the run's pause: it has one, of `scope` when one is given. */
export function liftsPause(run: RunRecord, scope: PauseScope | undefined): boolean {
  return run.paused !== undefined && (scope === undefined || run.paused.scope === scope);
}
