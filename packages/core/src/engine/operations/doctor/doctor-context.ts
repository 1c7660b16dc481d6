import type { DueRun, RunRecord, RunSummary } from '../../../model/run.js';
import type { StepRecord } from '../../../model/step.js';
import type { WorkflowStore } from '../../../store/workflow-store.js';
import type { DoctorFinding } from '../../../store/store-doctor.js';
import type { DoctorLimits, DoctorThresholds } from './doctor-options.js';

/** What the engine lends the doctor: the store and the two ways it hands work to workers. */
export interface DoctorEngine {
  readonly store: WorkflowStore;
  dispatchRun(run: { id: string; workflow: string; priority?: number }): Promise<void>;
  dispatchStep(job: { runId: string; workflow: string; key: string; attempt: number; priority?: number }): Promise<void>;
  /**
   * False when a dispatch would reach nobody: the engine's queue is its own in-process one and it
   * runs no workers (a CLI with only a store). Repairs that need a dispatch are then not made.
   */
  reachesWorkers(): boolean;
}

/** Why a repair that needs a dispatch was not made (see `DoctorEngine.reachesWorkers`). */
export const NO_WORKERS =
  "not dispatched: this engine's queue is in-process and it runs no workers, so a job would reach nobody; run the doctor " +
  'from a process whose engine runs workers, or give it the queue the workers use (pg-boss, BullMQ)';

const ACTIVE = ['pending', 'running', 'waiting'] as const;
// One page of the active-runs read (the store's largest page is 1000).
const PAGE = 500;

/**
 * One doctor pass: the options, and the reads the checks share, each made once and capped by the
 * limits (a read that hit its cap is named in `truncated`).
 */
export class DoctorContext {
  readonly truncated = new Set<string>();
  private active?: Promise<RunSummary[]>;
  private due?: Promise<DueRun[]>;
  private readonly steps = new Map<string, Promise<StepRecord[]>>();
  private readonly runs = new Map<string, Promise<RunRecord | undefined>>();

  constructor(
    readonly engine: DoctorEngine,
    readonly now: number,
    readonly fix: boolean,
    readonly thresholds: DoctorThresholds,
    readonly limits: DoctorLimits,
  ) {}

  get store(): WorkflowStore {
    return this.engine.store;
  }

  /**
   * Runs that are not terminal and old enough for some check to judge (created before `now` minus
   * the smallest threshold), newest first, at most `limits.runs`: paged through the store's
   * status index, never a scan.
   */
  activeRuns(): Promise<RunSummary[]> {
    this.active ??= (async () => {
      const youngest = Math.min(...Object.values(this.thresholds));
      const out: RunSummary[] = [];
      let cursor: string | undefined;
      do {
        const page = await this.store.runs.list({
          status: [...ACTIVE],
          createdBefore: this.now - youngest + 1,
          limit: Math.min(PAGE, this.limits.runs - out.length),
          ...(cursor === undefined ? {} : { cursor }),
        });
        out.push(...page.runs);
        cursor = page.nextCursor;
      } while (cursor !== undefined && out.length < this.limits.runs);
      if (cursor !== undefined) this.truncated.add(`active runs (first ${this.limits.runs} read)`);
      return out;
    })();
    return this.active;
  }

  /**
   * Runs due for at least `thresholds.overdueMs` (their timer passed, or their lease expired, that
   * long ago), most overdue first, at most `limits.runs`: the recovery loop's own indexed read.
   */
  overdueRuns(): Promise<DueRun[]> {
    this.due ??= (async () => {
      const due = await this.store.runs.findDue(this.now - this.thresholds.overdueMs, this.limits.runs);
      if (due.length >= this.limits.runs) this.truncated.add(`overdue runs (first ${this.limits.runs} read)`);
      return due;
    })();
    return this.due;
  }

  /** One run, read once per pass. */
  run(runId: string): Promise<RunRecord | undefined> {
    let read = this.runs.get(runId);
    if (!read) {
      read = this.store.runs.get(runId);
      this.runs.set(runId, read);
    }
    return read;
  }

  /**
   * The steps of a run, loaded once per pass; `undefined` once `limits.stepLoads` runs have been
   * loaded (the pass is then marked truncated).
   */
  stepsOf(runId: string): Promise<StepRecord[]> | undefined {
    let load = this.steps.get(runId);
    if (!load) {
      if (this.steps.size >= this.limits.stepLoads) {
        this.truncated.add(`steps (loaded for the first ${this.limits.stepLoads} runs)`);
        return undefined;
      }
      load = this.store.steps.load(runId);
      this.steps.set(runId, load);
    }
    return load;
  }

  /** Like `repair`, for a repair that is a dispatch: not made (and said so) when no worker would get it. */
  dispatchRepair(finding: DoctorFinding, action: string, dispatch: () => Promise<void>): Promise<DoctorFinding> {
    if (this.fix && finding.fixable && !this.engine.reachesWorkers()) return Promise.resolve({ ...finding, fixed: false, action: NO_WORKERS });
    return this.repair(finding, action, dispatch);
  }

  /**
   * Runs `repair` when fixing and records the outcome on `finding` (`fixed`, `action`); a repair
   * that throws leaves the finding unfixed, with the error in `action`.
   */
  async repair(finding: DoctorFinding, action: string, repair: () => Promise<void>): Promise<DoctorFinding> {
    if (!this.fix || !finding.fixable) return finding;
    try {
      await repair();
      return { ...finding, fixed: true, action };
    } catch (error) {
      return { ...finding, fixed: false, action: `${action} failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
}

/** A duration in the largest whole unit, for messages (`12 min`, `3 h`). */
export function ago(ms: number): string {
  if (ms >= 2 * 86_400_000) return `${Math.floor(ms / 86_400_000)} days`;
  if (ms >= 2 * 3_600_000) return `${Math.floor(ms / 3_600_000)} h`;
  if (ms >= 2 * 60_000) return `${Math.floor(ms / 60_000)} min`;
  return `${Math.floor(ms / 1000)} s`;
}
