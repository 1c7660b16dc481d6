import type { DoctorFinding } from '../../../store/store-doctor.js';
import { ago, type DoctorContext } from './doctor-context.js';

/**
 * `step-not-started`: a queued step (`ctx.step(..., { queue: true })`) still `scheduled` more than
 * `scheduledStepMs` after it was scheduled: no step worker started it, although its run re-sends
 * the job every `dispatchTimeoutMs`. No engine runs workers on that workflow's step queue. Since
 * when: the step's creation for attempt 1, the end of the previous attempt for a later one (one
 * history read). Fix: send the step's job again (the step worker's compare-and-set makes a
 * duplicate harmless).
 */
export async function checkStaleScheduledSteps(ctx: DoctorContext): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  for (const run of await ctx.activeRuns()) {
    if (run.status !== 'waiting' && run.status !== 'running') continue;
    const load = ctx.stepsOf(run.id);
    if (!load) break;
    for (const step of await load) {
      if (!step.queued || step.status !== 'scheduled') continue;
      let since = step.createdAt;
      if (step.attempt > 1) {
        const previous = (await ctx.store.history.list(run.id)).filter((a) => a.stepKey === step.key && a.attempt < step.attempt);
        since = Math.max(since, ...previous.map((a) => a.endedAt ?? a.startedAt));
      }
      if (ctx.now - since < ctx.thresholds.scheduledStepMs) continue;
      const finding: DoctorFinding = {
        code: 'step-not-started',
        severity: 'error',
        runId: run.id,
        message:
          `Step "${step.key}" of run ${run.id} (${run.workflow}) was queued ${ago(ctx.now - since)} ago (attempt ${step.attempt}) and no step worker has ` +
          `started it. No engine runs workers on the step queue of "${run.workflow}". --fix sends the step's job again.`,
        fixable: true,
      };
      findings.push(
        await ctx.dispatchRepair(finding, 'sent the step job again', () =>
          ctx.engine.dispatchStep({
            runId: run.id,
            workflow: run.workflow,
            key: step.key,
            attempt: step.attempt,
            ...(run.priority === undefined ? {} : { priority: run.priority }),
          }),
        ),
      );
    }
  }
  return findings;
}
