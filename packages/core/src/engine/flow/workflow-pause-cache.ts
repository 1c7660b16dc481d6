import type { Clock } from '../../clock/clock.js';
import type { WorkflowStore } from '../../store/workflow-store.js';

/**
 * How often an engine re-reads the paused workflows (`PauseStore.listWorkflowPauses`): a pause
 * written by another process reaches this engine's first claims within this time.
 */
export const WORKFLOW_PAUSE_REFRESH_MS = 10_000;

/**
 * The paused workflows as this engine last read them: what a run's first claim checks, with no
 * store read unless the run's workflow is listed (decision 63). Kept up by this engine's own
 * `pauseWorkflow` / `resumeWorkflow` at once, and by a read every `WORKFLOW_PAUSE_REFRESH_MS`
 * from the recovery loop (and one when the engine starts).
 */
export class WorkflowPauseCache {
  private names = new Set<string>();
  private readAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: WorkflowStore,
    private readonly clock: Clock,
  ) {}

  /** Whether `workflow` was paused at the last read (or by this engine since). */
  has(workflow: string): boolean {
    return this.names.size > 0 && this.names.has(workflow);
  }

  /** This engine paused `workflow`. */
  add(workflow: string): void {
    this.names.add(workflow);
  }

  /** This engine resumed `workflow`, or found it resumed. */
  delete(workflow: string): void {
    this.names.delete(workflow);
  }

  /**
   * Reads the paused workflows when the last read is `WORKFLOW_PAUSE_REFRESH_MS` old (or `force`),
   * on a store with pauses; returns the workflows paused since the previous read.
   */
  async refresh(force = false): Promise<string[]> {
    const pauses = this.store.pauses;
    const now = this.clock.now();
    if (pauses === undefined || (!force && now - this.readAt < WORKFLOW_PAUSE_REFRESH_MS)) return [];
    this.readAt = now;
    const names = new Set((await pauses.listWorkflowPauses()).map((p) => p.workflow));
    const added = [...names].filter((name) => !this.names.has(name));
    this.names = names;
    return added;
  }
}
