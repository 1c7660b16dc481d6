import type { DoctorFinding } from '../../../store/store-doctor.js';
import { checkExpiredLeases } from './check-expired-leases.js';
import { checkOrphanedChildren } from './check-orphaned-children.js';
import { checkStaleScheduledSteps } from './check-stale-scheduled-steps.js';
import { checkStoreDrift } from './check-store-drift.js';
import { checkUnboundedEventWaits } from './check-unbounded-event-waits.js';
import { checkUndispatchedRuns } from './check-undispatched-runs.js';
import { checkUnregisteredVersions } from './check-unregistered-versions.js';
import { checkUnwokenParents } from './check-unwoken-parents.js';
import { DoctorContext, type DoctorEngine } from './doctor-context.js';
import { checkDoctorOptions, type DoctorReport } from './doctor-options.js';

/** Every check, in report order. The store's own checks run first: they repair the indexes the others read. */
const CHECKS: ReadonlyArray<(ctx: DoctorContext) => Promise<DoctorFinding[]>> = [
  checkStoreDrift,
  checkExpiredLeases,
  checkUndispatchedRuns,
  checkStaleScheduledSteps,
  checkUnwokenParents,
  checkOrphanedChildren,
  checkUnregisteredVersions,
  checkUnboundedEventWaits,
];

/** One doctor pass (`Engine.doctor`): checks the options, runs every check, builds the report. */
export async function runDoctor(engine: DoctorEngine, clockNow: number, rawOptions: unknown): Promise<DoctorReport> {
  const { fix, now, thresholds, limits } = checkDoctorOptions(rawOptions, clockNow);
  const ctx = new DoctorContext(engine, now, fix, thresholds, limits);
  const findings: DoctorFinding[] = [];
  for (const check of CHECKS) findings.push(...(await check(ctx)));
  return { at: now, fix, findings, remaining: findings.filter((f) => f.fixed !== true).length, truncated: [...ctx.truncated], thresholds, limits };
}
