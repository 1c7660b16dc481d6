import type { DoctorFinding } from '../../../store/store-doctor.js';
import type { DoctorContext } from './doctor-context.js';

/**
 * `child-orphaned` (warning): an active child run whose parent no longer exists (it was deleted
 * while the child ran). The child still runs to its end, but nobody will read its result. Not
 * fixable: whether its work should finish is the operator's call (cancel it if not).
 */
export async function checkOrphanedChildren(ctx: DoctorContext): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  for (const run of await ctx.activeRuns()) {
    if (!run.parent) continue;
    if (await ctx.run(run.parent.runId)) continue;
    findings.push({
      code: 'child-orphaned',
      severity: 'warning',
      runId: run.id,
      message:
        `Run ${run.id} (${run.workflow}) was started as a child by run ${run.parent.runId} (step ${JSON.stringify(run.parent.stepKey)}), which no longer ` +
        `exists: nobody will read this run's result. Let it finish if its effects are wanted, or cancel it.`,
      fixable: false,
    });
  }
  return findings;
}
