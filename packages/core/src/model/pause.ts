/**
 * Who paused a run: `run` — `engine.pause` named it; `workflow` — `engine.pauseWorkflow` paused
 * every run of its workflow. `engine.resumeWorkflow` lifts only the `workflow` pauses, so a run an
 * operator paused on its own stays paused.
 */
export type PauseScope = 'run' | 'workflow';

/** A pause on a run, as `RunRecord.paused` keeps it (see `PauseStore`). */
export interface RunPause {
  /** When the pause was written (epoch milliseconds, the pausing engine's clock). */
  at: number;
  /** Who paused the run. */
  scope: PauseScope;
  /** The reason the pause was given, kept as written; absent when none was given. */
  reason?: string;
}

/** A paused workflow, as `PauseStore.getWorkflowPause` returns it. */
export interface WorkflowPause {
  workflow: string;
  /** When the workflow was paused (epoch milliseconds). */
  at: number;
  /** The reason given, kept as written; absent when none was given. */
  reason?: string;
}
