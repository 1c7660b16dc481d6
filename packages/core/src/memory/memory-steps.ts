// The memory store's steps and their attempts, and the history read over them (see `StepStore`,
// `HistoryStore`).
import { CairnError } from '../errors/cairn-error.js';
import type { NewStep, StepTransition } from '../model/step.js';
import type { HistoryStore, StepStore } from '../store/workflow-store.js';
import { copy, type MemoryData } from './memory-data.js';
import { type StoredAttempt, StoredStep, traitsOf } from './stored-step.js';

/** `StepStore` over the memory store's data. */
export function memorySteps(data: MemoryData): StepStore {
  return {
    async load(runId) {
      const e = data.entry(runId);
      if (!e) return [];
      return [...e.steps.values()].sort((a, b) => a.seq - b.seq).map((step) => step.toRecord(runId));
    },

    async insert(runId, fence, step: NewStep, now) {
      const e = data.writable(runId, fence);
      const existing = e.steps.get(step.key);
      if (existing) return { step: existing.toRecord(runId), created: false };
      // A running step opens attempt 1 in the same write; a step given `finishedAttempt` records it.
      const traits = traitsOf(step, fence, e.lastTraits);
      e.lastTraits = traits;
      const stored = new StoredStep(step, now, traits, traits.first === undefined ? -1 : e.attemptsOpened++);
      e.steps.set(step.key, stored);
      return { step: stored.toRecord(runId), created: true };
    },

    async transition(runId, fence, t: StepTransition, now) {
      const e = data.writable(runId, fence);
      const step = e.steps.get(t.key);
      if (!step || !t.from.status.includes(step.status) || step.attempt !== t.from.attempt) {
        throw new CairnError('STEP_CONFLICT', `Step ${t.key} of run ${runId} does not match the expected status/attempt`, {
          data: { runId, key: t.key, status: step?.status ?? null, attempt: step?.attempt ?? null },
        });
      }
      const nextAttempt = t.to.attempt ?? step.attempt;
      if (t.endAttempt) {
        const open = step.attemptNo(step.attempt);
        if (open) {
          open.status = t.endAttempt.status;
          open.endedAt = now;
          if (t.endAttempt.output !== undefined) open.output = copy(t.endAttempt.output);
          if (t.endAttempt.error !== undefined) open.error = copy(t.endAttempt.error);
        }
      }
      if (t.startAttempt) {
        // One record per (step, attempt number): opening a number that exists reopens it.
        data.openAttempt(e, step, nextAttempt, t.startAttempt.worker, now);
      }
      step.status = t.to.status;
      step.attempt = nextAttempt;
      step.updatedAt = now;
      if (t.to.output !== undefined) step.output = copy(t.to.output);
      if (t.to.error !== undefined) step.error = copy(t.to.error);
      if (t.to.wakeAt === null) step.wakeAt = undefined;
      else if (t.to.wakeAt !== undefined) step.wakeAt = t.to.wakeAt;
      if (t.to.childRunId !== undefined) step.childRunId = t.to.childRunId;
      if (t.to.turn !== undefined) step.turn = t.to.turn;
      return step.toRecord(runId);
    },
  };
}

/** `HistoryStore` over the memory store's data: every attempt of a run, in the order they started. */
export function memoryHistory(data: MemoryData): HistoryStore {
  return {
    async list(runId) {
      const e = data.entry(runId);
      if (!e) return [];
      const all: Array<{ step: StoredStep; attempt: StoredAttempt }> = [];
      for (const step of e.steps.values()) for (const attempt of step.eachAttempt()) all.push({ step, attempt });
      // `order` last: the order attempts were first opened in, as a map of them iterated.
      all.sort(
        (a, b) =>
          a.attempt.startedAt - b.attempt.startedAt || a.step.seq - b.step.seq || a.attempt.attempt - b.attempt.attempt || a.attempt.order - b.attempt.order,
      );
      return all.map(({ step, attempt }) => attempt.toRecord(runId, step.key));
    },
  };
}
