import type { DoctorFinding } from '../../../store/store-doctor.js';
import { checkMilliseconds } from '../../define/duration.js';
import { checkOptionalBoolean, checkOptions, invalidInput } from '../../check-input.js';

/**
 * How long each kind of lateness may last before the doctor reports it (milliseconds). The
 * defaults are well past what a healthy deployment ever shows, so a finding means something.
 */
export interface DoctorThresholds {
  /**
   * A run due (its timer passed) or whose lease expired this long ago and still not taken over:
   * no recovery loop is dispatching it (default 5 min; the recovery loop runs every 2 s).
   */
  overdueMs: number;
  /** A queued step still `scheduled` (no step worker started it) after this long (default 15 min). */
  scheduledStepMs: number;
  /** A wait for an event with no timeout, in a run with no deadline, older than this (default 24 h). */
  eventWaitMs: number;
  /** A parent still waiting this long after its child ended (default 5 min; the wake is immediate). */
  childWakeMs: number;
}

/** How much the doctor reads at most; past a cap it stops and says so in `DoctorReport.truncated`. */
export interface DoctorLimits {
  /** Runs read per kind of read (active runs, due runs), and entries per store structure (default 1000). */
  runs: number;
  /** Runs whose steps are loaded (one `steps.load` each; default 200). */
  stepLoads: number;
}

/** Options of `Engine.doctor`. */
export interface DoctorOptions {
  /** Repair what is safe to repair, and report each repair (default false: read only). */
  fix?: boolean;
  /** The time to judge lateness against (epoch ms; default the engine's clock). */
  now?: number;
  thresholds?: Partial<DoctorThresholds>;
  limits?: Partial<DoctorLimits>;
}

/** What `Engine.doctor` answers. */
export interface DoctorReport {
  /** The time the checks judged against (epoch ms). */
  at: number;
  /** Whether repairs were asked for. */
  fix: boolean;
  /** Everything found, fixed or not, in check order. */
  findings: DoctorFinding[];
  /** How many findings remain: not fixed (a fixed finding is gone once the repair's work is done). */
  remaining: number;
  /** Reads that stopped at a limit (their checks may have missed something); empty when every read was complete. */
  truncated: string[];
  /** The thresholds and limits used. */
  thresholds: DoctorThresholds;
  limits: DoctorLimits;
}

export const DEFAULT_THRESHOLDS: DoctorThresholds = {
  overdueMs: 5 * 60_000,
  scheduledStepMs: 15 * 60_000,
  eventWaitMs: 24 * 3_600_000,
  childWakeMs: 5 * 60_000,
};

export const DEFAULT_LIMITS: DoctorLimits = { runs: 1000, stepLoads: 200 };

/** The largest cap a caller may set: the doctor must stay a bounded read (the store hook's bound too). */
const MAX_LIMIT = 100_000;

/** Checks `engine.doctor` options (INVALID_INPUT naming the bad one) and fills in the defaults. */
export function checkDoctorOptions(value: unknown, clockNow: number): { fix: boolean; now: number; thresholds: DoctorThresholds; limits: DoctorLimits } {
  const options = checkOptions('doctor options', value, ['fix', 'now', 'thresholds', 'limits']) as DoctorOptions;
  const fix = checkOptionalBoolean('doctor fix', options.fix) ?? false;
  if (options.now !== undefined && (typeof options.now !== 'number' || !Number.isFinite(options.now) || options.now < 0)) {
    throw invalidInput('doctor now', 'must be epoch milliseconds (a finite number ≥ 0)', options.now);
  }
  const now = options.now ?? clockNow;
  const rawThresholds = checkOptions('doctor thresholds', options.thresholds, Object.keys(DEFAULT_THRESHOLDS));
  const thresholds = { ...DEFAULT_THRESHOLDS };
  for (const [name, raw] of Object.entries(rawThresholds)) {
    if (raw !== undefined) thresholds[name as keyof DoctorThresholds] = checkMilliseconds(raw, `doctor thresholds.${name}`);
  }
  const rawLimits = checkOptions('doctor limits', options.limits, Object.keys(DEFAULT_LIMITS));
  const limits = { ...DEFAULT_LIMITS };
  for (const [name, raw] of Object.entries(rawLimits)) {
    if (raw === undefined) continue;
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > MAX_LIMIT)
      throw invalidInput(`doctor limits.${name}`, `must be an integer from 1 to ${MAX_LIMIT}`, raw);
    limits[name as keyof DoctorLimits] = raw;
  }
  return { fix, now, thresholds, limits };
}
