import { checkStoreDoctorOptions, type DoctorFinding, type StoreDoctorOptions, type StoreDoctorResult } from '@cairn/core/backend';
import type { Cluster, Redis } from 'ioredis';
import { opt, type Hash } from './codec.js';
import { factsOf, syncIndex, type StoreContext } from './context.js';

// One SCAN/HSCAN/ZSCAN round asks for this many entries (a hint to Redis, not a bound).
const SCAN_COUNT = 500;

/** The run-hash fields the checks compare with the indexes. */
const FACT_FIELDS = ['id', 'rev', 'status', 'workflow', 'createdAt', 'wakeAt', 'leaseExp', 'idem', 'idemField'] as const;

type Facts = Partial<Record<(typeof FACT_FIELDS)[number], string>>;

/** A glob pattern that matches `text` literally (SCAN's MATCH treats `*?[]\` as special). */
const globEscape = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

/** Walks one cursor-based scan, at most `limit` entries; answers them and whether it stopped early. */
async function walk(limit: number, step: (cursor: string) => Promise<[string, string[]]>): Promise<{ items: string[]; truncated: boolean }> {
  const items: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await step(cursor);
    cursor = next;
    items.push(...batch);
  } while (cursor !== '0' && items.length < limit);
  return { items: items.slice(0, limit), truncated: cursor !== '0' || items.length > limit };
}

/** HSCAN / ZSCAN replies are flat `[member, value, ...]`: the members (and their values). */
const pairs = (flat: string[]): Array<[string, string]> => {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i] as string, flat[i + 1] as string]);
  return out;
};

/**
 * The Redis store's own doctor (`WorkflowStore.doctor`): drift between the run hashes and the
 * global indexes (listing sets, due set, index facts `{prefix}:ix`, idempotency keys). In
 * single-server mode every write updates both atomically, so drift means someone wrote keys by
 * hand; in cluster mode a process dying between a run write and its index write leaves it (see
 * docs/backends/redis.md). Readers repair what they meet, but an entry nobody meets stays:
 *
 * - `redis.index-dangling`: index entries of a run that no longer exists (an interrupted delete).
 *   Fix: remove them (`FORGET_RUN`).
 * - `redis.idempotency-dangling`: an idempotency key still held by a deleted run. Harmless to
 *   starts (a create takes it over), but drift. Fix: release it.
 * - `redis.index-stale`: the indexes record another status or due time than the run has (an
 *   interrupted index write): listings by status miss it, or recovery finds it late. Fix: re-record.
 * - `redis.run-unindexed`: a run no index lists (an interrupted create): `listRuns` and recovery
 *   never see it, and its idempotency key is not held. Fix: index it (and claim its key).
 *
 * Bounded: each structure (the `:ix` hash, the due and listing sets, the idempotency hash, the
 * run keys) is walked for at most `limit` entries; one that was not finished is named in
 * `truncated`. Finding unindexed runs needs a SCAN of the run keys — the only SCAN the store
 * makes, run by the doctor alone, on every master of a cluster.
 */
export function redisDoctor(ctx: StoreContext): (options: StoreDoctorOptions) => Promise<StoreDoctorResult> {
  const G = ctx.keys.global;
  const readFacts = async (ids: readonly string[]): Promise<Map<string, Facts | undefined>> => {
    const replies = await Promise.all(ids.map((id) => ctx.caller.command('doctor', 'HMGET', [ctx.keys.run(id), ...FACT_FIELDS])));
    const out = new Map<string, Facts | undefined>();
    ids.forEach((id, i) => {
      const values = (replies[i] as Array<string | null>) ?? [];
      if (values[0] === null || values[0] === undefined) {
        out.set(id, undefined);
        return;
      }
      const facts: Facts = {};
      FACT_FIELDS.forEach((field, k) => {
        const value = values[k];
        if (typeof value === 'string') facts[field] = value;
      });
      out.set(id, facts);
    });
    return out;
  };
  const forget = (id: string, idemField?: string) => ctx.caller.script(ctx.scripts.forgetRun, [ctx.keys.runs], [id, '', opt(idemField)]);

  return async (options) => {
    const { fix, limit } = checkStoreDoctorOptions(options);
    const findings: DoctorFinding[] = [];
    const truncated: string[] = [];
    const repair = async (finding: DoctorFinding, action: string, work: () => Promise<unknown>) => {
      if (!fix) return findings.push(finding);
      try {
        await work();
        findings.push({ ...finding, fixed: true, action });
      } catch (error) {
        findings.push({ ...finding, fixed: false, action: `${action} failed: ${error instanceof Error ? error.message : String(error)}` });
      }
    };

    // 1. Index entries: the facts hash, the due set and the listing set, against the run hashes.
    const ix = await walk(limit, async (cursor) => {
      const [next, flat] = (await ctx.caller.command('doctor', 'HSCAN', [`${G}:ix`, cursor, 'COUNT', SCAN_COUNT])) as [string, string[]];
      return [next, pairs(flat).map(([id, value]) => `${id}\u0000${value}`)];
    });
    if (ix.truncated) truncated.push(`${G}:ix (first ${limit} entries)`);
    const recorded = new Map(ix.items.map((entry) => entry.split('\u0000') as [string, string]));
    const zsetIds = async (key: string) => {
      const scan = await walk(limit, async (cursor) => {
        const [next, flat] = (await ctx.caller.command('doctor', 'ZSCAN', [key, cursor, 'COUNT', SCAN_COUNT])) as [string, string[]];
        return [next, pairs(flat).map(([id]) => id)];
      });
      if (scan.truncated) truncated.push(`${key} (first ${limit} entries)`);
      return scan.items;
    };
    const ids = [...new Set([...recorded.keys(), ...(await zsetIds(ctx.keys.due)), ...(await zsetIds(ctx.keys.runs))])];
    const runs = await readFacts(ids);
    const dueScores = await Promise.all(ids.map((id) => ctx.caller.command('doctor', 'ZSCORE', [ctx.keys.due, id])));
    for (const [i, id] of ids.entries()) {
      const facts = runs.get(id);
      if (!facts) {
        await repair(
          {
            code: 'redis.index-dangling',
            severity: 'warning',
            runId: id,
            message:
              `The indexes still list run ${id}, which no longer exists (a delete was interrupted between the run's keys and its index ` +
              `entries). Listings and recovery skip it and repair it when they meet it; --fix removes the entries now.`,
            fixable: true,
          },
          'removed its index entries',
          () => forget(id),
        );
        continue;
      }
      const expected = factsOf(facts as Hash);
      const [, , status, , , due] = expected;
      const recordedStatus = recorded.get(id)?.split('|')[1];
      const score = dueScores[i] === null || dueScores[i] === undefined ? '' : String(dueScores[i]);
      const dueMatches = score === '' || due === '' ? score === due : Number(score) === Number(due);
      // Not in the facts hash at all: the unindexed-runs walk below reports it.
      if (recordedStatus === undefined || (recordedStatus === status && dueMatches)) continue;
      await repair(
        {
          code: 'redis.index-stale',
          severity: 'error',
          runId: id,
          message:
            `The indexes record run ${id} as ${recordedStatus}${score === '' ? '' : ` due at ${score}`}, but the run is ${status}${due === '' ? '' : ` due at ${due}`} ` +
            `(an index write was interrupted): listings by status miss it and recovery may find it late. --fix re-records it.`,
          fixable: true,
        },
        're-recorded its index entries',
        () => syncIndex(ctx, expected),
      );
    }

    // 2. Idempotency keys held by runs that no longer exist.
    const idem = await walk(limit, async (cursor) => {
      const [next, flat] = (await ctx.caller.command('doctor', 'HSCAN', [`${G}:idem`, cursor, 'COUNT', SCAN_COUNT])) as [string, string[]];
      return [next, pairs(flat).map(([field, id]) => `${field}\u0000${id}`)];
    });
    if (idem.truncated) truncated.push(`${G}:idem (first ${limit} entries)`);
    const held = idem.items.map((entry) => entry.split('\u0000') as [string, string]);
    const holders = await readFacts([...new Set(held.map(([, id]) => id))]);
    for (const [field, id] of held) {
      if (holders.get(id)) continue;
      await repair(
        {
          code: 'redis.idempotency-dangling',
          severity: 'warning',
          runId: id,
          message: `Idempotency key ${field} is still held by run ${id}, which no longer exists (an interrupted delete). A new start with that key takes it over; --fix releases it now.`,
          fixable: true,
        },
        'released the idempotency key',
        () => forget(id, field),
      );
    }

    // 3. Run hashes no index records (a create whose index write was lost).
    const pattern = `${globEscape(ctx.keys.prefix)}:run:{*}`;
    const client = ctx.caller.client;
    const nodes = client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
    const runKeys: string[] = [];
    for (const node of nodes) {
      const scan = await walk(limit - runKeys.length, async (cursor) => {
        const [next, keys] = (await node.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT)) as [string, string[]];
        return [next, keys];
      });
      runKeys.push(...scan.items);
      if (scan.truncated || runKeys.length >= limit) {
        truncated.push(`run keys (first ${limit} scanned)`);
        break;
      }
    }
    const hashes = await Promise.all(runKeys.map((key) => ctx.caller.command('doctor', 'HMGET', [key, ...FACT_FIELDS])));
    const indexed = await Promise.all(
      hashes.map((values) =>
        typeof (values as unknown[])[0] === 'string' ? ctx.caller.command('doctor', 'HEXISTS', [`${G}:ix`, (values as string[])[0] as string]) : 1,
      ),
    );
    for (const [i, values] of hashes.entries()) {
      if (Number(indexed[i]) === 1) continue;
      const facts: Hash = {};
      FACT_FIELDS.forEach((field, k) => {
        const value = (values as Array<string | null>)[k];
        if (typeof value === 'string') facts[field] = value;
      });
      const id = facts.id as string;
      const idemField = facts.idemField;
      await repair(
        {
          code: 'redis.run-unindexed',
          severity: 'error',
          runId: id,
          message:
            `Run ${id} (${facts.workflow}, ${facts.status}) exists but no index lists it (its create was interrupted before the index write): listRuns ` +
            `and recovery never see it${idemField ? ', and its idempotency key is not held' : ''}. --fix indexes it.`,
          fixable: true,
        },
        idemField ? 'indexed the run and claimed its idempotency key' : 'indexed the run',
        async () => {
          const facts6 = factsOf(facts);
          if (!idemField) return syncIndex(ctx, facts6);
          const answer = (await ctx.caller.script(ctx.scripts.claimCreated, [ctx.keys.runs], [idemField, '', ...facts6])) as unknown[];
          if (answer[0] === 'EXISTS') await syncIndex(ctx, facts6);
        },
      );
    }
    return { findings, truncated };
  };
}
