import { invalidInput } from '../errors/invalid-input.js';
import { checkedCall as checked } from './checked-call.js';
import type { NewStep, StepTransition } from '../model/step.js';
import type { StepStore } from './workflow-store.js';
import { str, optStr, num, optNum, fence, obj, strings } from './check-argument-types.js';

// `withArgumentChecks` for `steps`: new steps and transitions (with their attempts).

function newStep(op: string, value: NewStep): void {
  const step = obj(op, 'step', value);
  str(op, 'step.key', step.key);
  str(op, 'step.name', step.name);
  str(op, 'step.kind', step.kind);
  str(op, 'step.status', step.status);
  num(op, 'step.seq', step.seq);
  num(op, 'step.maxAttempts', step.maxAttempts);
  optStr(op, 'step.worker', step.worker);
  optStr(op, 'step.childRunId', step.childRunId);
  optNum(op, 'step.wakeAt', step.wakeAt);
  if (step.finishedAttempt !== undefined) finishedAttempt(op, step.status, step.finishedAttempt);
}

// A step recorded finished carries attempt 1's outcome; a live status would leave it open.
const FINISHED_STEP_STATUSES: ReadonlySet<unknown> = new Set(['succeeded', 'failed', 'retry_wait']);

const FINISHED_ATTEMPT_STATUSES: ReadonlySet<unknown> = new Set(['succeeded', 'failed', 'abandoned']);

function finishedAttempt(op: string, stepStatus: unknown, value: unknown): void {
  const attempt = obj(op, 'step.finishedAttempt', value);
  if (!FINISHED_STEP_STATUSES.has(stepStatus))
    throw invalidInput(`${op}: step.status`, 'must be succeeded, failed or retry_wait with a finishedAttempt', stepStatus);
  if (!FINISHED_ATTEMPT_STATUSES.has(attempt.status))
    throw invalidInput(`${op}: step.finishedAttempt.status`, 'must be succeeded, failed or abandoned', attempt.status);
  str(op, 'step.finishedAttempt.worker', attempt.worker);
  num(op, 'step.finishedAttempt.startedAt', attempt.startedAt);
}

function stepTransition(op: string, value: StepTransition): void {
  const t = obj(op, 'transition', value);
  str(op, 'transition.key', t.key);
  const from = obj(op, 'transition.from', t.from);
  strings(op, 'transition.from.status', from.status);
  num(op, 'transition.from.attempt', from.attempt);
  const to = obj(op, 'transition.to', t.to);
  str(op, 'transition.to.status', to.status);
  optNum(op, 'transition.to.attempt', to.attempt);
  optStr(op, 'transition.to.childRunId', to.childRunId);
  if (to.wakeAt !== null) optNum(op, 'transition.to.wakeAt', to.wakeAt);
  if (t.startAttempt !== undefined) str(op, 'transition.startAttempt.worker', obj(op, 'transition.startAttempt', t.startAttempt).worker);
}

export function checkedSteps(steps: StepStore): StepStore {
  return {
    load: (runId) =>
      checked(
        () => {
          str('steps.load', 'runId', runId);
        },
        () => steps.load(runId),
      ),
    // The two writes of every step, checked as `checked` does but without its two closures per
    // call (a visible share of an inline step's CPU on the memory store, issue 18).
    insert: (runId, f, step, now) => {
      try {
        str('steps.insert', 'runId', runId);
        fence('steps.insert', f, true);
        newStep('steps.insert', step);
        num('steps.insert', 'now', now);
      } catch (error) {
        return Promise.reject(error);
      }
      return steps.insert(runId, f, step, now);
    },
    transition: (runId, f, t, now) => {
      try {
        str('steps.transition', 'runId', runId);
        fence('steps.transition', f, true);
        stepTransition('steps.transition', t);
        num('steps.transition', 'now', now);
      } catch (error) {
        return Promise.reject(error);
      }
      return steps.transition(runId, f, t, now);
    },
  };
}
