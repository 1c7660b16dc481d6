import type { DoctorFinding } from '../../../store/store-doctor.js';
import { ago, type DoctorContext } from './doctor-context.js';

/**
 * `run-not-dispatched`: a `pending` or `waiting` run whose `wakeAt` passed more than `overdueMs`
 * ago: its start, timer, retry or wake-up is due and no worker picked it up. Either no recovery
 * loop runs for its workflow, or its jobs are lost. Fix: dispatch the run's job.
 */
export async function checkUndispatchedRuns(ctx: DoctorContext): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  for (const due of await ctx.overdueRuns()) {
    if (due.reason !== 'wake') continue;
    const run = await ctx.run(due.id);
    if (!run || (run.status !== 'pending' && run.status !== 'waiting') || run.wakeAt === undefined) continue;
    const what = run.status === 'pending' ? 'it was created but never started' : 'its timer, retry or wake-up passed';
    const finding: DoctorFinding = {
      code: 'run-not-dispatched',
      severity: 'error',
      runId: run.id,
      message:
        `Run ${run.id} (${run.workflow}) has been due for ${ago(ctx.now - run.wakeAt)} (${run.status}: ${what}) and no worker picked it up. ` +
        `No engine with workers and recovery is running for "${run.workflow}", or its queue loses jobs. --fix dispatches it now.`,
      fixable: true,
    };
    findings.push(await ctx.dispatchRepair(finding, 'dispatched the run to its orchestrator queue', () => ctx.engine.dispatchRun(run)));
  }
  return findings;
}
