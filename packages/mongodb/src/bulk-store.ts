import type { BulkOperationRecord, BulkStore } from '@cairn/core/backend';
import type { StoreContext } from './context.js';
import { guard, isDuplicateKey } from './errors.js';

/**
 * A document of `<prefix>bulk_operations`: `_id` the operation's id (its `_id` index serves the
 * newest-first listing), `revision` the compare-and-set token, and the whole record as JSON text,
 * so a filter with `$`-prefixed or dotted strings is stored as it is.
 */
export interface BulkOperationDoc {
  _id: string;
  revision: number;
  record: string;
}

const lockKey = (id: string) => `\u0000bulk\u0000${id}`;

const toRecord = (doc: BulkOperationDoc): BulkOperationRecord => ({ ...(JSON.parse(doc.record) as BulkOperationRecord), id: doc._id, revision: doc.revision });

const toDoc = (record: BulkOperationRecord): BulkOperationDoc => ({ _id: record.id, revision: record.revision, record: JSON.stringify(record) });

/** The `bulk` part: one document per operation; `update` is one conditional `updateOne` on (`_id`, `revision`). */
export function createBulkStore(ctx: StoreContext): BulkStore {
  return {
    create: (operation) =>
      guard('bulk.create', () =>
        ctx.exclusive(lockKey(operation.id), async () => {
          const record = { ...operation, revision: 1 };
          try {
            await ctx.bulkOperations.insertOne(toDoc(record));
            return { operation: record, created: true };
          } catch (err) {
            if (!isDuplicateKey(err)) throw err;
          }
          const existing = await ctx.bulkOperations.findOne({ _id: record.id });
          return existing ? { operation: toRecord(existing), created: false } : { operation: record, created: false };
        }),
      ),
    get: (id) =>
      guard('bulk.get', async () => {
        const doc = await ctx.bulkOperations.findOne({ _id: id });
        return doc ? toRecord(doc) : undefined;
      }),
    list: ({ limit, before }) =>
      guard('bulk.list', async () => {
        const docs = await ctx.bulkOperations
          .find(before === undefined ? {} : { _id: { $lt: before } })
          .sort({ _id: -1 })
          .limit(limit)
          .toArray();
        return docs.map(toRecord);
      }),
    update: (operation, expectedRevision) =>
      guard('bulk.update', () =>
        ctx.exclusive(lockKey(operation.id), async () => {
          const record = { ...operation, revision: expectedRevision + 1 };
          const { _id, ...fields } = toDoc(record);
          const result = await ctx.bulkOperations.updateOne({ _id, revision: expectedRevision }, { $set: fields });
          return result.matchedCount === 1 ? record : undefined;
        }),
      ),
    delete: (id) => guard('bulk.delete', () => ctx.exclusive(lockKey(id), async () => (await ctx.bulkOperations.deleteOne({ _id: id })).deletedCount === 1)),
  };
}
