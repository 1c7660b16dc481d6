import { CairnError } from '@cairn/core';
import type { RunRecord } from '@cairn/core';
import type { DeleteCondition, NewRun, RunReopen, RunStore, RunTags, RunTransition } from '@cairn/core/backend';
import { indexTags, setRunTags, unindexTags } from './run-tags.js';
import { jsonText, newRunFields, opt, parseRun, toHash } from './codec.js';
import { callRunScript, runWrite, writeError, type StoreContext } from './context.js';
import { findDue, listEnded, listRuns } from './index-reads.js';
import { idempotencyField } from './keys.js';

/** Reads one run's hash. */
export async function readRun(ctx: StoreContext, runId: string): Promise<RunRecord | undefined> {
  return parseRun(toHash(await ctx.caller.command('runs.get', 'HGETALL', [ctx.keys.run(runId)])));
}

const runOf = (payload: unknown[]): RunRecord => {
  const run = parseRun(toHash(payload));
  if (!run) throw new CairnError('STORE_ERROR', 'Redis store: a script answered without the run');
  return run;
};

/**
 * `runs.create` of a run with tags: its tag index entries first (so the index is never missing a
 * run that has the tag), then the create; a create that made no run takes the entries back.
 */
async function createTaggedRun(ctx: StoreContext, input: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
  const tags = input.tags === undefined || Object.keys(input.tags).length === 0 ? undefined : input.tags;
  if (tags === undefined) return createRun(ctx, input, now);
  await indexTags(ctx, input.id, now, tags);
  try {
    const made = await createRun(ctx, input, now);
    if (!made.created) await unindexTags(ctx, input.id, tags);
    return made;
  } catch (error) {
    // A run id that exists already keeps its own entries (this id's tags may be among them): reads repair what is left.
    if (!CairnError.is(error, 'INVALID_INPUT')) await unindexTags(ctx, input.id, tags).catch(ctx.onIndexError);
    throw error;
  }
}

/** `runs.create`: one script in combined mode; run script then index script in split mode. */
async function createRun(ctx: StoreContext, input: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
  const idemField = input.idempotencyKey === undefined ? '' : idempotencyField(input.workflow, input.idempotencyKey);
  const fields = newRunFields(input, now);
  let stale = '';
  for (let round = 0; round < 8; round++) {
    const reply = await callRunScript(ctx, ctx.scripts.createRun, input.id, [idemField, stale, ...fields]);
    if (reply.code === 'EXISTS') {
      const existingId = String(reply.payload[0]);
      const existing = await readRun(ctx, existingId);
      if (existing) return { run: existing, created: false };
      stale = existingId; // the key points at a deleted run: it may be taken over
      continue;
    }
    if (reply.code === 'DUPLICATE_ID') {
      if (idemField !== '') {
        const holder = await ctx.caller.command('runs.create', 'HGET', [`${ctx.keys.global}:idem`, idemField]);
        const existing = typeof holder === 'string' ? await readRun(ctx, holder) : undefined;
        if (existing) return { run: existing, created: false };
      }
      throw new CairnError('INVALID_INPUT', `Run id ${input.id} already exists`, { data: { runId: input.id } });
    }
    const run = runOf(reply.payload);
    if (ctx.mode === 'combined') return { run, created: true };
    // Split mode: claim the idempotency key and index the run, in the global slot.
    for (let claim = 0; claim < 8; claim++) {
      const answer = (await ctx.caller.script(ctx.scripts.claimCreated, [ctx.keys.runs], [idemField, stale, ...reply.facts.slice(0, 6)])) as unknown[];
      if (answer[0] !== 'EXISTS') return { run, created: true };
      const winnerId = String(answer[1]);
      const winner = await readRun(ctx, winnerId);
      if (winner) {
        await callRunScript(ctx, ctx.scripts.deleteRun, input.id, []);
        return { run: winner, created: false };
      }
      stale = winnerId;
    }
    break;
  }
  throw new CairnError('STORE_ERROR', `Redis store: could not settle idempotency key of run ${input.id}`, {
    data: { runId: input.id },
  });
}

/** The `runs` part of the store. */
export function createRunStore(ctx: StoreContext): RunStore {
  const s = ctx.scripts;
  return {
    create: (input, now) => createTaggedRun(ctx, input, now),

    setTags: setRunTags(ctx),

    get: (runId) => readRun(ctx, runId),

    list: (query) => listRuns(ctx, query),

    async claim(runId, owner, leaseMs, now) {
      const reply = await runWrite(ctx, s.claimRun, runId, [owner, String(now), String(now + leaseMs)]);
      return reply.code === 'OK' ? runOf(reply.payload) : undefined;
    },

    async renew(runId, fence, leaseMs, now) {
      const reply = await runWrite(ctx, s.renewLease, runId, [String(fence), String(now), String(now + leaseMs)]);
      if (reply.code !== 'OK') {
        throw new CairnError('LEASE_LOST', `Run ${runId}: lease with fence ${fence} is gone`, { data: { runId, fence } });
      }
      return runOf(reply.payload);
    },

    async transition(runId, fence, t: RunTransition, now) {
      const args = [String(fence), String(now), t.to, opt(t.wakeAt), opt(jsonText(t.output)), opt(jsonText(t.error)), ...t.from];
      // Leaving `running` for pending/waiting can make the run due sooner than its lease expiry
      // (a wake-up merged since the claim): hint `now` so a crash before the index write cannot
      // leave the due set later than the truth (cluster mode; ignored otherwise).
      const hint = t.to === 'waiting' || t.to === 'pending' ? now : undefined;
      const reply = await runWrite(ctx, s.transitionRun, runId, args, hint);
      if (reply.code === 'RUN_CONFLICT') {
        const status = String(reply.payload[0]);
        throw new CairnError('RUN_CONFLICT', `Run ${runId} is ${status}, expected ${t.from.join('|')}`, {
          data: { runId, status },
        });
      }
      if (reply.code !== 'OK') throw writeError(runId, reply.code, reply.payload, fence);
      return runOf(reply.payload);
    },

    async wake(runId, now) {
      await runWrite(ctx, s.wakeRun, runId, [String(now)], now);
    },

    async promiseWake(runId, at, now) {
      await runWrite(ctx, s.promiseWake, runId, [String(at), String(now)], at);
    },

    async keepPromise(runId, now) {
      await runWrite(ctx, s.keepPromise, runId, [String(now)], now);
    },

    async requestCancel(runId, now, reason) {
      const reply = await runWrite(ctx, s.requestCancel, runId, [String(now), reason === undefined ? '0' : '1', reason ?? ''], now);
      return reply.code === 'OK' ? runOf(reply.payload) : undefined;
    },

    findDue: (now, limit) => findDue(ctx, now, limit),

    async findByIdempotencyKey(workflow, idempotencyKey) {
      const holder = await ctx.caller.command('runs.findByIdempotencyKey', 'HGET', [`${ctx.keys.global}:idem`, idempotencyField(workflow, idempotencyKey)]);
      const run = typeof holder === 'string' ? await readRun(ctx, holder) : undefined;
      // The key may still point at a run deleted in split mode before its index write.
      return run?.workflow === workflow && run.idempotencyKey === idempotencyKey ? run : undefined;
    },

    async reopen(runId, reopen: RunReopen, now) {
      const current = await readRun(ctx, runId);
      // The whole new list is written by the script, which refuses it if the fence moved since.
      const retries = JSON.stringify([...(current?.retries ?? []), reopen.retry]);
      const deadline = reopen.deadline === undefined ? '' : reopen.deadline === null ? '-' : `=${reopen.deadline}`;
      const reply = await runWrite(ctx, s.reopenRun, runId, [String(reopen.fence), String(now), retries, deadline, ...reopen.forget], now);
      if (reply.code === 'RUN_NOT_FOUND') throw writeError(runId, reply.code, reply.payload);
      if (reply.code === 'RUN_CONFLICT') {
        const status = String(reply.payload[0]);
        throw new CairnError(
          'RUN_CONFLICT',
          `Run ${runId} is ${status} (fence ${String(reply.payload[1])}); only a failed or cancelled run at fence ${reopen.fence} can be reopened`,
          { data: { runId, status } },
        );
      }
      return runOf(reply.payload);
    },

    listEnded: (query) => listEnded(ctx, query),

    async delete(runId, condition?: DeleteCondition) {
      const reply = await runWrite(ctx, s.deleteRun, runId, condition === undefined ? [] : [condition.statuses.join(','), String(condition.updatedBefore)]);
      if (reply.payload[0] !== '1') return false;
      // The script answers the run's tags: it leaves their index sets now that it is gone.
      const tagsText = String(reply.payload[4] ?? '');
      if (tagsText !== '') await unindexTags(ctx, runId, JSON.parse(tagsText) as RunTags);
      if (ctx.mode === 'split') {
        const [, id, workflow, idemField] = reply.payload.map(String);
        await ctx.caller.script(s.forgetRun, [ctx.keys.runs], [id ?? runId, opt(workflow), opt(idemField || undefined)]).catch(ctx.onIndexError);
      }
      return true;
    },
  };
}
