import { CairnError } from '@cairn/core';
import type { Fence, HistoryStore, NewStep, StepStore, StepTransition } from '@cairn/core/backend';
import { firstAttemptFields, jsonText, newStepFields, opt, parseAttempt, parseStep, toHash } from './codec.js';
import { callRunScript, writeError, type StoreContext } from './context.js';

const fenceArg = (fence: Fence): string => (fence === null ? '' : String(fence));

/** The `steps` part of the store. Step writes touch the run's slot only: no index work. */
export function createStepStore(ctx: StoreContext): StepStore {
  const s = ctx.scripts;
  return {
    async load(runId) {
      const reply = await callRunScript(ctx, s.loadSteps, runId, []);
      return reply.payload.map((fields) => parseStep(runId, toHash(fields)));
    },

    async insert(runId, fence, step: NewStep, now) {
      const stepFields = newStepFields(step, now, fence);
      const attemptFields = firstAttemptFields(step, now);
      const args = [fenceArg(fence), step.key, String(step.seq), String(stepFields.length), ...stepFields, ...attemptFields];
      const reply = await callRunScript(ctx, s.insertStep, runId, args);
      if (reply.code !== 'OK') throw writeError(runId, reply.code, reply.payload, fence);
      return { step: parseStep(runId, toHash(reply.payload[1])), created: reply.payload[0] === '1' };
    },

    async transition(runId, fence, t: StepTransition, now) {
      const wake = t.to.wakeAt === null ? '-' : opt(t.to.wakeAt);
      const args = [
        fenceArg(fence),
        String(now),
        t.key,
        String(t.from.attempt),
        t.to.status,
        opt(t.to.attempt),
        opt(jsonText(t.to.output)),
        opt(jsonText(t.to.error)),
        wake,
        opt(t.to.childRunId),
        opt(t.endAttempt?.status),
        opt(jsonText(t.endAttempt?.output)),
        opt(jsonText(t.endAttempt?.error)),
        opt(t.startAttempt?.worker),
        opt(t.to.turn),
        ...t.from.status,
      ];
      const reply = await callRunScript(ctx, s.transitionStep, runId, args);
      if (reply.code === 'STEP_CONFLICT') {
        const [status, attempt] = reply.payload;
        throw new CairnError('STEP_CONFLICT', `Step ${t.key} of run ${runId} does not match the expected status/attempt`, {
          data: {
            runId,
            key: t.key,
            status: status === undefined ? null : String(status),
            attempt: attempt === undefined ? null : Number(attempt),
          },
        });
      }
      if (reply.code !== 'OK') throw writeError(runId, reply.code, reply.payload, fence);
      return parseStep(runId, toHash(reply.payload));
    },
  };
}

/** The `history` part: every attempt of the run, oldest first (startedAt, step seq, attempt). */
export function createHistoryStore(ctx: StoreContext): HistoryStore {
  return {
    async list(runId) {
      const reply = await callRunScript(ctx, ctx.scripts.loadHistory, runId, []);
      const [attempts, steps] = reply.payload as [unknown[] | undefined, unknown[] | undefined];
      const seq = new Map<string, number>();
      const flat = steps ?? [];
      for (let i = 0; i + 1 < flat.length; i += 2) seq.set(String(flat[i]), Number(flat[i + 1]));
      const seqOf = (key: string) => seq.get(key) ?? 0;
      return (attempts ?? [])
        .map((fields) => parseAttempt(runId, toHash(fields)))
        .sort((a, b) => a.startedAt - b.startedAt || seqOf(a.stepKey) - seqOf(b.stepKey) || a.attempt - b.attempt);
    },
  };
}
