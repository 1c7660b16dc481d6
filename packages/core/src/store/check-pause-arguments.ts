import { invalidInput } from '../errors/invalid-input.js';
import { checkedCall as checked } from './checked-call.js';
import type { PauseStore } from './workflow-store.js';
import { str, optStr, num, obj } from './check-argument-types.js';

// `withArgumentChecks` for `pauses`: run and workflow pauses.

const PAUSE_SCOPES: ReadonlySet<unknown> = new Set(['run', 'workflow']);

function pauseScope(op: string, what: string, value: unknown): void {
  if (!PAUSE_SCOPES.has(value)) throw invalidInput(`${op}: ${what}`, "must be 'run' or 'workflow'", value);
}

export function checkedPauses(pauses: PauseStore): PauseStore {
  return {
    pauseRun: (runId, pause, now) =>
      checked(
        () => {
          str('pauses.pauseRun', 'runId', runId);
          const p = obj('pauses.pauseRun', 'pause', pause);
          pauseScope('pauses.pauseRun', 'pause.scope', p.scope);
          optStr('pauses.pauseRun', 'pause.reason', p.reason);
          num('pauses.pauseRun', 'now', now);
        },
        () => pauses.pauseRun(runId, pause, now),
      ),
    resumeRun: (runId, now, scope) =>
      checked(
        () => {
          str('pauses.resumeRun', 'runId', runId);
          num('pauses.resumeRun', 'now', now);
          if (scope !== undefined) pauseScope('pauses.resumeRun', 'scope', scope);
        },
        () => (scope === undefined ? pauses.resumeRun(runId, now) : pauses.resumeRun(runId, now, scope)),
      ),
    pauseWorkflow: (workflow, now, reason) =>
      checked(
        () => {
          str('pauses.pauseWorkflow', 'workflow', workflow);
          num('pauses.pauseWorkflow', 'now', now);
          optStr('pauses.pauseWorkflow', 'reason', reason);
        },
        () => (reason === undefined ? pauses.pauseWorkflow(workflow, now) : pauses.pauseWorkflow(workflow, now, reason)),
      ),
    resumeWorkflow: (workflow) =>
      checked(
        () => str('pauses.resumeWorkflow', 'workflow', workflow),
        () => pauses.resumeWorkflow(workflow),
      ),
    getWorkflowPause: (workflow) =>
      checked(
        () => str('pauses.getWorkflowPause', 'workflow', workflow),
        () => pauses.getWorkflowPause(workflow),
      ),
    listWorkflowPauses: () => pauses.listWorkflowPauses(),
  };
}
