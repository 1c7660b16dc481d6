import { checkStoreDoctorOptions, type DoctorFinding, type StoreDoctorOptions, type StoreDoctorResult } from '@cairn/core/backend';
import type { Filter, UpdateFilter } from 'mongodb';
import type { StoreContext } from './context.js';
import type { RunDoc } from './documents.js';
import { guard } from './errors.js';
import { RUN_INDEXES, SLOT_WAITER_INDEXES, VERSION_INDEXES } from './indexes.js';

type DueView = Pick<RunDoc, '_id' | 'workflow' | 'status' | 'wakeAt' | 'lease' | 'dueAt'>;
const PROJECTION = { _id: 1, workflow: 1, status: 1, wakeAt: 1, lease: 1, dueAt: 1 } as const;

/** What `dueAt` must be for the run as stored: `wakeAt` while pending/waiting, the lease expiry while running, absent when terminal. */
function expectedDue(run: DueView): number | undefined {
  if (run.status === 'pending' || run.status === 'waiting') return run.wakeAt;
  if (run.status === 'running') return run.lease?.expiresAt;
  return undefined;
}

const show = (at: number | undefined) => (at === undefined ? 'absent' : new Date(at).toISOString());

/**
 * The MongoDB store's own doctor (`WorkflowStore.doctor`): what it keeps beside the run records.
 *
 * - `mongodb.index-missing` (error): an index the store's queries need does not exist (`init()`
 *   was not run on this database, or the index was dropped): listings and `findDue` scan the
 *   collection. Fix: create it, as `init()` does.
 * - `mongodb.due-drift` (error): a run's `dueAt` — the field `findDue` reads — is not what its
 *   status, `wakeAt` and lease say (a document written by hand, or by an older release): recovery
 *   finds it late, never, or in vain. Fix: set it from the run, by a compare-and-set on the values
 *   it was computed from (a run that changed meanwhile is left alone).
 *
 * Bounded: at most `limit` runs by `dueAt` (the due index) and `limit` active runs (the status
 * index) are read, each a projection of six fields; a read that hit the cap is named in `truncated`.
 */
export function mongoDoctor(ctx: StoreContext): (options: StoreDoctorOptions) => Promise<StoreDoctorResult> {
  return async (options) => {
    const checked = checkStoreDoctorOptions(options);
    return guard('doctor', () => inspect(ctx, checked));
  };
}

async function inspect(ctx: StoreContext, { fix, limit }: StoreDoctorOptions): Promise<StoreDoctorResult> {
  const findings: DoctorFinding[] = [];
  const truncated: string[] = [];
  const repair = async (finding: DoctorFinding, action: string, work: () => Promise<boolean>) => {
    if (!fix) return void findings.push(finding);
    try {
      const done = await work();
      findings.push({ ...finding, fixed: done, action: done ? action : `${action}: skipped, the run changed meanwhile` });
    } catch (error) {
      findings.push({ ...finding, fixed: false, action: `${action} failed: ${error instanceof Error ? error.message : String(error)}` });
    }
  };

  for (const [collection, wanted] of [
    [ctx.runs, RUN_INDEXES],
    [ctx.versions, VERSION_INDEXES],
    [ctx.slotWaiters, SLOT_WAITER_INDEXES],
  ] as const) {
    const present = new Set(
      (
        await collection
          .listIndexes()
          .toArray()
          .catch((error: { code?: number }) => {
            // A collection that does not exist yet has no indexes.
            if (error.code === 26) return [];
            throw error;
          })
      ).map((index) => String(index.name)),
    );
    for (const index of wanted) {
      if (present.has(index.name as string)) continue;
      await repair(
        {
          code: 'mongodb.index-missing',
          severity: 'error',
          message:
            `Collection ${collection.collectionName} lacks index ${index.name} (${JSON.stringify(index.key)}): the queries it serves scan the whole ` +
            `collection. init() was not run on this database, or the index was dropped. --fix creates it (as init() does).`,
          fixable: true,
        },
        `created index ${index.name}`,
        async () => {
          await (collection as typeof ctx.runs).createIndexes([index]);
          return true;
        },
      );
    }
  }

  const byDue = await ctx.runs
    .find({ dueAt: { $exists: true } }, { projection: PROJECTION })
    .sort({ dueAt: 1, _id: 1 })
    .limit(limit)
    .toArray();
  if (byDue.length >= limit) truncated.push(`runs by dueAt (first ${limit})`);
  const active = await ctx.runs
    .find({ status: { $in: ['pending', 'running', 'waiting'] } }, { projection: PROJECTION })
    .sort({ status: 1, createdAt: -1, _id: -1 })
    .limit(limit)
    .toArray();
  if (active.length >= limit) truncated.push(`active runs (first ${limit})`);
  const seen = new Set<string>();
  for (const run of [...byDue, ...active] as DueView[]) {
    if (seen.has(run._id)) continue;
    seen.add(run._id);
    const expected = expectedDue(run);
    if (expected === run.dueAt) continue;
    const late = run.dueAt === undefined || (expected !== undefined && run.dueAt > expected);
    await repair(
      {
        code: 'mongodb.due-drift',
        severity: 'error',
        runId: run._id,
        message:
          `Run ${run._id} (${run.workflow}, ${run.status}) has dueAt ${show(run.dueAt)}, the field recovery reads, but its record says ${show(expected)}: ` +
          `${expected === undefined ? 'recovery looks at it in vain' : late ? 'recovery finds it late or never' : 'recovery finds it early'}. ` +
          `(Written by hand or by an older release.) --fix sets dueAt from the run.`,
        fixable: true,
      },
      `set dueAt to ${show(expected)}`,
      async () => {
        // Only the state the value was computed from: a run that moved on keeps its own dueAt.
        const filter: Record<string, unknown> = {
          _id: run._id,
          status: run.status,
          wakeAt: run.wakeAt === undefined ? { $exists: false } : run.wakeAt,
          'lease.expiresAt': run.lease === undefined ? { $exists: false } : run.lease.expiresAt,
          dueAt: run.dueAt === undefined ? { $exists: false } : run.dueAt,
        };
        const update = expected === undefined ? { $unset: { dueAt: '' } } : { $set: { dueAt: expected } };
        // Serialised with this process's other writes of the run where the server needs it (FerretDB).
        const result = await ctx.exclusive(run._id, () => ctx.runs.updateOne(filter as Filter<RunDoc>, update as UpdateFilter<RunDoc>));
        return result.modifiedCount === 1;
      },
    );
  }
  return { findings, truncated };
}
