import type { ScheduleRecord, ScheduleStore } from '@cairn/core/backend';
import type { StoreContext } from './context.js';
import { guard, isDuplicateKey } from './errors.js';

/**
 * A document of `<prefix>schedules`: `_id` the name, `revision` the compare-and-set token, `dueAt`
 * (absent while paused: the index is sparse) and the whole record as JSON text, so an input with
 * `$`-prefixed or dotted keys is stored as it is.
 */
export interface ScheduleDoc {
  _id: string;
  revision: number;
  dueAt?: number;
  record: string;
}

const lockKey = (name: string) => `\u0000schedule\u0000${name}`;

const toRecord = (doc: ScheduleDoc): ScheduleRecord => ({
  ...(JSON.parse(doc.record) as ScheduleRecord),
  name: doc._id,
  revision: doc.revision,
  dueAt: doc.dueAt ?? null,
});

const toDoc = (record: ScheduleRecord): ScheduleDoc => ({
  _id: record.name,
  revision: record.revision,
  ...(record.dueAt === null ? {} : { dueAt: record.dueAt }),
  record: JSON.stringify(record),
});

/** The `schedules` part: one document per schedule; `update` is one conditional `updateOne` on (`_id`, `revision`). */
export function createScheduleStore(ctx: StoreContext): ScheduleStore {
  return {
    create: (schedule) =>
      guard('schedules.create', () =>
        ctx.exclusive(lockKey(schedule.name), async () => {
          const record = { ...schedule, revision: 1 };
          try {
            await ctx.schedules.insertOne(toDoc(record));
            return { schedule: record, created: true };
          } catch (err) {
            if (!isDuplicateKey(err)) throw err;
          }
          const existing = await ctx.schedules.findOne({ _id: record.name });
          return existing ? { schedule: toRecord(existing), created: false } : { schedule: record, created: false };
        }),
      ),
    get: (name) =>
      guard('schedules.get', async () => {
        const doc = await ctx.schedules.findOne({ _id: name });
        return doc ? toRecord(doc) : undefined;
      }),
    list: ({ limit, after }) =>
      guard('schedules.list', async () => {
        const docs = await ctx.schedules
          .find(after === undefined ? {} : { _id: { $gt: after } })
          .sort({ _id: 1 })
          .limit(limit)
          .toArray();
        return docs.map(toRecord);
      }),
    update: (schedule, expectedRevision) =>
      guard('schedules.update', () =>
        ctx.exclusive(lockKey(schedule.name), async () => {
          const record = { ...schedule, revision: expectedRevision + 1 };
          const { _id, ...fields } = toDoc(record);
          const result = await ctx.schedules.updateOne(
            { _id, revision: expectedRevision },
            record.dueAt === null ? { $set: fields, $unset: { dueAt: '' } } : { $set: fields },
          );
          return result.matchedCount === 1 ? record : undefined;
        }),
      ),
    delete: (name) =>
      guard('schedules.delete', () => ctx.exclusive(lockKey(name), async () => (await ctx.schedules.deleteOne({ _id: name })).deletedCount === 1)),
    findDue: (now, limit) =>
      guard('schedules.findDue', async () => {
        const docs = await ctx.schedules
          .find({ dueAt: { $lte: now } })
          .sort({ dueAt: 1, _id: 1 })
          .limit(limit)
          .toArray();
        return docs.map(toRecord);
      }),
  };
}
