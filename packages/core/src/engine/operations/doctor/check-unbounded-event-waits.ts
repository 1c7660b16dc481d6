import type { DoctorFinding } from '../../../store/store-doctor.js';
import { ago, type DoctorContext } from './doctor-context.js';

// The step name of a wait is 'event:' + the event's name (see Execution.eventStep).
const EVENT_STEP_PREFIX = 'event:';

/**
 * `event-wait-unbounded` (warning): a `waiting` run, with no deadline and no cancel requested, that
 * has waited more than `eventWaitMs` for an event with no timeout. Whether someone outside will
 * still send it, Cairn cannot know; what it can say is that nothing inside Cairn will ever end this
 * wait — no timer, no deadline — so only `engine.sendEvent(runId, name)` or a cancel can. Not
 * fixable: sending or cancelling is the operator's decision. Only `ctx.waitForEvent` waits are
 * judged: a `select`'s step does not record its alternatives (a child among them may end it).
 */
export async function checkUnboundedEventWaits(ctx: DoctorContext): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  for (const run of await ctx.activeRuns()) {
    if (run.status !== 'waiting' || run.deadline !== undefined || run.cancelRequested) continue;
    const load = ctx.stepsOf(run.id);
    if (!load) break;
    for (const step of await load) {
      if (step.kind !== 'event' || step.status !== 'waiting' || step.wakeAt !== undefined) continue;
      if (ctx.now - step.createdAt < ctx.thresholds.eventWaitMs) continue;
      const name = step.name.startsWith(EVENT_STEP_PREFIX) ? step.name.slice(EVENT_STEP_PREFIX.length) : step.name;
      findings.push({
        code: 'event-wait-unbounded',
        severity: 'warning',
        runId: run.id,
        message:
          `Run ${run.id} (${run.workflow}) has waited ${ago(ctx.now - step.createdAt)} for event ${JSON.stringify(name)} with no timeout, and the run has no ` +
          `deadline: nothing inside Cairn will ever end this wait. Only sendEvent(${JSON.stringify(run.id)}, ${JSON.stringify(name)}) can; if nothing will ` +
          `send it, cancel the run (and give such waits a timeout or the workflow a deadline).`,
        fixable: false,
      });
    }
  }
  return findings;
}
