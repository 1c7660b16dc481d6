import type { PauseScope, WorkflowPause } from '../model/pause.js';
import type { RunRecord } from '../model/run.js';
import { copyRecord } from '../store/copy-record.js';
import { liftsPause, pausableRun, pauseMark } from '../store/pause-marks.js';
import type { PauseStore } from '../store/workflow-store.js';

/** What the memory pause store needs of the memory store: its run records, by reference. */
export interface MemoryRunAccess {
  /** The stored record of a run (mutable), or `undefined`. */
  get(runId: string): RunRecord | undefined;
  /** Replaces the stored record of a run. */
  set(runId: string, run: RunRecord): void;
  /** Wakes the run as `runs.wake` does. */
  wake(runId: string, now: number): void;
}

/** The memory store's `PauseStore`: atomic because every method runs synchronously between awaits. */
export function createMemoryPauses(runs: MemoryRunAccess): PauseStore {
  const workflows = new Map<string, WorkflowPause>();
  return {
    async pauseRun(runId, pause, now) {
      const run = pausableRun(runId, runs.get(runId));
      if (run.paused !== undefined) return { run: copyRecord(run), changed: false };
      run.paused = pauseMark(pause, now);
      return { run: copyRecord(run), changed: true };
    },
    async resumeRun(runId, now, scope?: PauseScope) {
      const run = pausableRun(runId, runs.get(runId));
      if (!liftsPause(run, scope)) return { run: copyRecord(run), changed: false };
      // Rebuilt without the field (see memory-store's dropField: a `delete` slows the record).
      const { paused: _lifted, ...rest } = run;
      runs.set(runId, rest);
      runs.wake(runId, now);
      return { run: copyRecord(rest), changed: true };
    },
    async pauseWorkflow(workflow, now, reason) {
      const existing = workflows.get(workflow);
      if (existing) return { pause: { ...existing }, changed: false };
      const pause: WorkflowPause = reason === undefined ? { workflow, at: now } : { workflow, at: now, reason };
      workflows.set(workflow, pause);
      return { pause: { ...pause }, changed: true };
    },
    async resumeWorkflow(workflow) {
      return workflows.delete(workflow);
    },
    async getWorkflowPause(workflow) {
      const pause = workflows.get(workflow);
      return pause === undefined ? undefined : { ...pause };
    },
    async listWorkflowPauses() {
      return [...workflows.values()]
        .sort((a, b) => (a.workflow < b.workflow ? -1 : a.workflow > b.workflow ? 1 : 0))
        .slice(0, 1000)
        .map((p) => ({ ...p }));
    },
  };
}
