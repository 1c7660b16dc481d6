import { isTerminalRunStatus } from '../../../model/run.js';
import type { DoctorFinding } from '../../../store/store-doctor.js';
import { ago, type DoctorContext } from './doctor-context.js';

/**
 * `parent-not-woken` (error): a `waiting` run whose `ctx.child` step still waits for a child that
 * ended (or was deleted) more than `childWakeMs` ago, and that is not due: the process that ended
 * the child died between the child's terminal write and waking the parent. The parent would look
 * again only at its backstop (`timings.childBackstopMs`, 1 h by default). Fix: wake the parent
 * (`runs.wake`, due now) and, when a worker can get it, dispatch it; it replays and takes the
 * child's outcome.
 */
export async function checkUnwokenParents(ctx: DoctorContext): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  for (const run of await ctx.activeRuns()) {
    if (run.status !== 'waiting' || (run.wakeAt !== undefined && run.wakeAt <= ctx.now)) continue;
    const load = ctx.stepsOf(run.id);
    if (!load) break;
    for (const step of await load) {
      if (step.kind !== 'child' || step.status !== 'waiting' || step.childRunId === undefined) continue;
      const child = await ctx.run(step.childRunId);
      if (child && !isTerminalRunStatus(child.status)) continue;
      // A deleted child leaves no time behind: judge by when the parent last changed.
      const ended = child ? child.updatedAt : run.updatedAt;
      if (ctx.now - ended < ctx.thresholds.childWakeMs) continue;
      const finding: DoctorFinding = {
        code: 'parent-not-woken',
        severity: 'error',
        runId: run.id,
        message:
          `Run ${run.id} (${run.workflow}) waits for its child ${step.childRunId} (step ${JSON.stringify(step.key)}), which ` +
          `${child ? `ended ${child.status} ${ago(ctx.now - ended)} ago` : 'was deleted'}, but was never woken to take the outcome (the process ending the ` +
          `child died before waking it). It would look again only at its backstop${run.wakeAt === undefined ? '' : ` (${new Date(run.wakeAt).toISOString()})`}. ` +
          `--fix wakes and dispatches it.`,
        fixable: true,
      };
      // The wake alone is the repair: any running recovery loop dispatches a due run. The dispatch
      // only saves that wait, when a worker can get it.
      const dispatch = ctx.engine.reachesWorkers();
      findings.push(
        await ctx.repair(
          finding,
          dispatch ? 'woke the run (due now) and dispatched it' : 'woke the run (due now; the next recovery pass dispatches it)',
          async () => {
            await ctx.store.runs.wake(run.id, ctx.now);
            if (dispatch) await ctx.engine.dispatchRun(run);
          },
        ),
      );
      break;
    }
  }
  return findings;
}
