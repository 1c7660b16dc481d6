import type { DoctorFinding } from '../../../store/store-doctor.js';
import { ago, type DoctorContext } from './doctor-context.js';

/**
 * `lease-expired`: a `running` run whose lease expired more than `overdueMs` ago and that no worker
 * took over. Its worker died (or lost the store) mid-turn, and no recovery loop is dispatching it.
 * Fix: dispatch the run's job; a worker claims it (an expired lease may be taken) and replays it.
 */
export async function checkExpiredLeases(ctx: DoctorContext): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  for (const due of await ctx.overdueRuns()) {
    if (due.reason !== 'lease-expired') continue;
    const run = await ctx.run(due.id);
    if (!run?.lease || run.status !== 'running') continue;
    const finding: DoctorFinding = {
      code: 'lease-expired',
      severity: 'error',
      runId: run.id,
      message:
        `Run ${run.id} (${run.workflow}) was being executed by worker ${JSON.stringify(run.lease.owner)}, whose lease expired ` +
        `${ago(ctx.now - run.lease.expiresAt)} ago, and no worker has taken it over. That worker most likely died; the run stays ` +
        `stuck until an engine with workers and its recovery loop runs for "${run.workflow}". --fix dispatches it now.`,
      fixable: true,
    };
    findings.push(await ctx.dispatchRepair(finding, 'dispatched the run to its orchestrator queue', () => ctx.engine.dispatchRun(run)));
  }
  return findings;
}
