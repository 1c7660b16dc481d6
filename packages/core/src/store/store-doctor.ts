/** How bad a finding is: `error` — work is stuck or data is inconsistent; `warning` — it may be. */
export type DoctorSeverity = 'error' | 'warning';

/**
 * One thing the doctor found. The same shape comes from the engine's checks and from a store's
 * own `WorkflowStore.doctor` hook.
 */
export interface DoctorFinding {
  /**
   * What was found, stable across releases: `lease-expired`, `run-not-dispatched`, ... (see
   * docs/operating.md, "The doctor"). A backend's own findings are prefixed with its name
   * (`redis.index-dangling`).
   */
  code: string;
  severity: DoctorSeverity;
  /** The run concerned, when there is one. */
  runId?: string;
  /** What it means, in words for an operator: what is wrong, why it matters, what to do. */
  message: string;
  /** True when `fix: true` may repair it (the repair is always safe: see each code). */
  fixable: boolean;
  /** With `fix: true`: true when the repair was made, false when it was tried and failed. Absent without `fix`. */
  fixed?: boolean;
  /** With `fixed`: what the repair did, in words (`dispatched the run`, `removed 3 index entries`). */
  action?: string;
}

/** What the doctor hands a store's own hook. */
export interface StoreDoctorOptions {
  /** Repair what is safe to repair (dangling index entries and the like) and report it as `fixed`. */
  fix: boolean;
  /** The time of the check (epoch ms). */
  now: number;
  /** The most index entries (or records) the hook may examine in each structure it walks. */
  limit: number;
}

/** What a store's own hook answers. */
export interface StoreDoctorResult {
  findings: DoctorFinding[];
  /** Names of the structures the hook stopped walking at `limit` (their findings are incomplete). */
  truncated: string[];
}
