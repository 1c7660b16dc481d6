import { CairnError } from '@cairn/core';
import type { RunRecord } from '@cairn/core';
import { pauseMark, type PauseScope, type PauseStore, type WorkflowPause } from '@cairn/core/backend';
import { parseRun, toHash } from './codec.js';
import { runWrite, writeError, type StoreContext } from './context.js';

const runOf = (payload: unknown[]): RunRecord => {
  const run = parseRun(toHash(payload));
  if (!run) throw new CairnError('STORE_ERROR', 'Redis store: a script answered without the run');
  return run;
};

/**
 * The `pauses` part. A run's pause is the field `paused` of its hash (the mark as JSON): the claim
 * script refuses a run that has it, and every script's index facts leave a paused run out of the
 * due sorted set (`dueOf`), so the due scan never meets it; resuming removes the field and wakes
 * the run in the same script, which puts it back. Paused workflows are one hash in the global slot
 * (`<global>:pauses`: workflow → the pause as JSON).
 */
export function createPauseStore(ctx: StoreContext): PauseStore {
  const s = ctx.scripts;
  const key = `${ctx.keys.global}:pauses`;
  const parse = (workflow: string, text: unknown): WorkflowPause => ({ ...(JSON.parse(String(text)) as Omit<WorkflowPause, 'workflow'>), workflow });
  return {
    async pauseRun(runId, pause, now) {
      const reply = await runWrite(ctx, s.pauseRun, runId, [JSON.stringify(pauseMark(pause, now))]);
      if (reply.code !== 'OK' && reply.code !== 'SAME') throw writeError(runId, reply.code, reply.payload);
      return { run: runOf(reply.payload), changed: reply.code === 'OK' };
    },

    async resumeRun(runId, now, scope?: PauseScope) {
      // Due now once resumed: the hint keeps a crash before the index write from stranding it (split mode).
      const reply = await runWrite(ctx, s.resumeRun, runId, [String(now), scope ?? ''], now);
      if (reply.code !== 'OK' && reply.code !== 'SAME') throw writeError(runId, reply.code, reply.payload);
      return { run: runOf(reply.payload), changed: reply.code === 'OK' };
    },

    async pauseWorkflow(workflow, now, reason) {
      const stored = reason === undefined ? { at: now } : { at: now, reason };
      const added = await ctx.caller.command('pauses.pauseWorkflow', 'HSETNX', [key, workflow, JSON.stringify(stored)]);
      if (Number(added) === 1) return { pause: { workflow, ...stored }, changed: true };
      const existing = await ctx.caller.command('pauses.pauseWorkflow', 'HGET', [key, workflow]);
      return { pause: existing === null || existing === undefined ? { workflow, ...stored } : parse(workflow, existing), changed: false };
    },

    async resumeWorkflow(workflow) {
      return Number(await ctx.caller.command('pauses.resumeWorkflow', 'HDEL', [key, workflow])) > 0;
    },

    async getWorkflowPause(workflow) {
      const text = await ctx.caller.command('pauses.getWorkflowPause', 'HGET', [key, workflow]);
      return text === null || text === undefined ? undefined : parse(workflow, text);
    },

    async listWorkflowPauses() {
      const hash = toHash(await ctx.caller.command('pauses.listWorkflowPauses', 'HGETALL', [key]));
      // Sorted by code point, as the other backends compare names (binary collation).
      return Object.keys(hash)
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, 1000)
        .map((workflow) => parse(workflow, hash[workflow]));
    },
  };
}
