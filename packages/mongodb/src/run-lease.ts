import { CairnError, isTerminalRunStatus } from '@cairn/core';
import { TERMINAL_RUN_STATUSES } from '@cairn/core/backend';
import type { RunRecord } from '@cairn/core';
import type { RunTransition } from '@cairn/core/backend';
import type { Filter, UpdateFilter } from 'mongodb';
import type { StoreContext } from './context.js';
import { RUN_ONLY, toRunRecord } from './documents.js';
import type { RunDoc } from './documents.js';
import { assertWritable, contention, guard } from './errors.js';
import { encodeError, encodeJson } from './json-codec.js';
import { MAX_RETRIES } from './run-wake.js';

const TERMINAL = [...TERMINAL_RUN_STATUSES];

/**
 * Takes the lease in one `findOneAndUpdate` whose filter is the whole claim condition, so of N
 * concurrent claimers exactly one matches. Increments `fence`, sets `dueAt` to the lease expiry
 * (recovery finds it again if this owner dies), and leaves `wakeAt` as the store contract says
 * (decision 78): cleared when due or the run was pending, a later one kept, lowered to an
 * outstanding promise later than the claim; a promise whose time came is forgotten with its count. A classic update cannot branch on the values it
 * finds, so the filter names the case: the usual one (no later `wakeAt`, no promise) first; else
 * one read and a compare-and-set on what it read, again when something moved between the two.
 */
export async function claim(ctx: StoreContext, runId: string, owner: string, leaseMs: number, now: number) {
  return guard('runs.claim', () =>
    ctx.exclusive(runId, async (): Promise<RunRecord | undefined> => {
      const expiresAt = now + leaseMs;
      const claimable: Filter<RunDoc> = {
        _id: runId,
        status: { $nin: TERMINAL },
        // A paused run is never claimed (see pause-store.ts).
        paused: { $exists: false },
        $or: [{ lease: { $exists: false } }, { 'lease.expiresAt': { $lte: now } }, { 'lease.owner': owner }],
      };
      const set = { status: 'running', lease: { owner, expiresAt }, dueAt: expiresAt, updatedAt: now };
      const usual = await ctx.runs.findOneAndUpdate(
        {
          $and: [claimable, { $nor: [{ status: { $in: ['waiting', 'running'] }, wakeAt: { $gt: now } }] }, { $nor: [{ promisedAt: { $gt: now } }] }],
        } as Filter<RunDoc>,
        { $set: set, $inc: { fence: 1 }, $unset: { wakeAt: '', promisedAt: '', promises: '' } } as UpdateFilter<RunDoc>,
        await ctx.modifyOptions(),
      );
      if (usual) return toRunRecord(usual);
      for (let i = 0; i < MAX_RETRIES; i++) {
        const doc = await ctx.runs.findOne(claimable, { projection: { status: 1, fence: 1, wakeAt: 1, promisedAt: 1 } });
        if (!doc) return undefined;
        const kept = doc.status !== 'pending' && doc.wakeAt !== undefined && doc.wakeAt > now ? doc.wakeAt : undefined;
        const promised = doc.promisedAt !== undefined && doc.promisedAt > now ? doc.promisedAt : undefined;
        const next = kept === undefined ? promised : promised === undefined ? kept : Math.min(kept, promised);
        const same = (field: 'wakeAt' | 'promisedAt') => (doc[field] === undefined ? { [field]: { $exists: false } } : { [field]: doc[field] });
        // An outstanding promise stays (its keeper settles it); one whose time came is forgotten.
        const unset: Record<string, ''> = promised === undefined ? { promisedAt: '', promises: '' } : {};
        if (next === undefined) unset.wakeAt = '';
        const updated = await ctx.runs.findOneAndUpdate(
          { $and: [claimable, { status: doc.status, fence: doc.fence }, same('wakeAt'), same('promisedAt')] } as Filter<RunDoc>,
          {
            $set: next === undefined ? set : { ...set, wakeAt: next },
            $inc: { fence: 1 },
            ...(Object.keys(unset).length === 0 ? {} : { $unset: unset }),
          } as UpdateFilter<RunDoc>,
          await ctx.modifyOptions(),
        );
        if (updated) return toRunRecord(updated);
      }
      throw contention('runs.claim', runId);
    }),
  );
}

/** Extends the lease; `LEASE_LOST` (nothing written) unless the fence is current and a lease is held. */
export async function renew(ctx: StoreContext, runId: string, fence: number, leaseMs: number, now: number) {
  return guard('runs.renew', () =>
    ctx.exclusive(runId, async (): Promise<RunRecord> => {
      const expiresAt = now + leaseMs;
      // A lease exists only while the run is `running`, so `dueAt` is the lease expiry.
      const doc = await ctx.runs.findOneAndUpdate(
        { _id: runId, fence, status: { $nin: TERMINAL }, lease: { $exists: true } },
        { $set: { 'lease.expiresAt': expiresAt, dueAt: expiresAt, updatedAt: now } },
        await ctx.modifyOptions(),
      );
      if (!doc) {
        throw new CairnError('LEASE_LOST', `Run ${runId}: lease with fence ${fence} is gone`, { data: { runId, fence } });
      }
      return toRunRecord(doc);
    }),
  );
}

/** What a status transition's update depends on besides status and fence. */
interface Observed {
  wakeAt: number | undefined;
  leaseExpiresAt: number | undefined;
}

/**
 * Builds the compare-and-set of a run transition for the run as `observed`. The filter holds
 * the fence, the allowed statuses, and every stored value the update was computed from, so it
 * only applies to the state it was computed for; `dueAt` stays exact (`wakeAt` while `pending`/
 * `waiting`, the lease expiry while `running`, absent when terminal).
 */
function buildTransition(runId: string, fence: number, t: RunTransition, now: number, observed: Observed) {
  const from = t.from.filter((s) => !isTerminalRunStatus(s));
  const filter: Record<string, unknown> = { _id: runId, fence, status: { $in: from } };
  const set: Record<string, unknown> = { status: t.to, updatedAt: now };
  const unset: Record<string, ''> = {};
  if (t.to !== 'running') unset.lease = '';
  if (isTerminalRunStatus(t.to)) {
    unset.wakeAt = '';
    unset.dueAt = '';
    if (t.output !== undefined) set.output = encodeJson(t.output);
    if (t.error !== undefined) set.error = encodeError(t.error);
  } else if (t.to === 'running') {
    filter.lease = observed.leaseExpiresAt === undefined ? { $exists: false } : { $exists: true };
    if (observed.leaseExpiresAt === undefined) unset.dueAt = '';
    else {
      filter['lease.expiresAt'] = observed.leaseExpiresAt;
      set.dueAt = observed.leaseExpiresAt;
    }
  } else {
    // pending / waiting: a wake requested since the claim (kept in wakeAt) must not be lost;
    // `transition.wakeAt` counts for `waiting` only (the contract ignores it otherwise).
    filter.wakeAt = observed.wakeAt === undefined ? { $exists: false } : observed.wakeAt;
    const asked = t.to === 'waiting' ? t.wakeAt : undefined;
    const next = asked === undefined ? observed.wakeAt : observed.wakeAt === undefined ? asked : Math.min(observed.wakeAt, asked);
    if (next === undefined) unset.dueAt = '';
    else {
      set.wakeAt = next;
      set.dueAt = next;
    }
  }
  const update: Record<string, unknown> = { $set: set };
  if (Object.keys(unset).length > 0) update.$unset = unset;
  return { filter: filter as Filter<RunDoc>, update: update as UpdateFilter<RunDoc> };
}

/**
 * Compare-and-set of the status. Usually ONE `findOneAndUpdate`: the first try assumes what a run
 * just claimed looks like (no `wakeAt`); when that misses, one read tells a stale fence
 * (`LEASE_LOST`), a terminal or unexpected status (`RUN_CONFLICT`), or a value that moved (a wake
 * arrived), and the update is retried for what was read.
 */
export async function transition(ctx: StoreContext, runId: string, fence: number, t: RunTransition, now: number) {
  return guard('runs.transition', () =>
    ctx.exclusive(runId, async (): Promise<RunRecord> => {
      let observed: Observed | undefined = t.to === 'running' ? undefined : { wakeAt: undefined, leaseExpiresAt: undefined };
      for (let i = 0; i < MAX_RETRIES; i++) {
        if (observed) {
          const { filter, update } = buildTransition(runId, fence, t, now, observed);
          const doc = await ctx.runs.findOneAndUpdate(filter, update, await ctx.modifyOptions());
          if (doc) return toRunRecord(doc);
        }
        const current = assertWritable(await ctx.runs.findOne({ _id: runId }, { projection: RUN_ONLY }), runId, fence);
        if (!t.from.includes(current.status)) {
          throw new CairnError('RUN_CONFLICT', `Run ${runId} is ${current.status}, expected ${t.from.join('|')}`, {
            data: { runId, status: current.status },
          });
        }
        observed = { wakeAt: current.wakeAt, leaseExpiresAt: current.lease?.expiresAt };
      }
      throw contention('runs.transition', runId);
    }),
  );
}
