import { sql } from 'kysely';
import type { BulkOperationRecord } from '@cairn/core/backend';
import { decodeJson, encodeJsonRequired, toNumber } from './codec/json.js';
import { decodeText, encodeText } from './codec/text.js';
import { affected, first, guard, insertedOnce, rows, type StoreContext } from './context.js';
import type { BulkOperationRow } from './schema/tables.js';

function toOperation(row: BulkOperationRow): BulkOperationRecord {
  const record = decodeJson<BulkOperationRecord>(row.record_json)!;
  // The columns are the truth for what the store itself maintains.
  return { ...record, id: decodeText(row.id), revision: toNumber(row.revision) };
}

/** The store's `bulk` noun (`cairn_0016_bulk_operations`): primary key `id`, every change a compare-and-set on `revision`. */
export function bulkOperationsOf(ctx: StoreContext) {
  const { t, dialect } = ctx;
  const read = (id: string) =>
    first(ctx.db, sql<BulkOperationRow>`select * from ${t.bulk_operations} where id = ${encodeText(id)}`).then((row) =>
      row === undefined ? undefined : toOperation(row),
    );
  return {
    create: (operation: BulkOperationRecord) =>
      guard('bulk.create', async () => {
        const record = { ...operation, revision: 1 };
        const insert = sql`insert into ${t.bulk_operations} (id, revision, record_json)
          values (${encodeText(record.id)}, 1, ${encodeJsonRequired(record as never)}) ${dialect.onConflictDoNothing()}`;
        if (await insertedOnce(ctx, insert)) return { operation: record, created: true };
        const existing = await read(record.id);
        // Deleted between the two statements: the caller's create may try again.
        return { operation: existing ?? record, created: existing === undefined };
      }),

    get: (id: string) => guard('bulk.get', () => read(id)),

    list: ({ limit, before }: { limit: number; before?: string }) =>
      guard('bulk.list', async () => {
        const where = before === undefined ? sql`` : sql`where id < ${encodeText(before)}`;
        const found = await rows(ctx.db, sql<BulkOperationRow>`select * from ${t.bulk_operations} ${where} order by id desc limit ${limit}`);
        return found.map(toOperation);
      }),

    update: (operation: BulkOperationRecord, expectedRevision: number) =>
      guard('bulk.update', async () => {
        const record = { ...operation, revision: expectedRevision + 1 };
        const changed = await affected(
          ctx.db,
          sql`update ${t.bulk_operations} set revision = ${record.revision}, record_json = ${encodeJsonRequired(record as never)}
            where id = ${encodeText(record.id)} and revision = ${expectedRevision}`,
        );
        return changed > 0 ? record : undefined;
      }),

    delete: (id: string) => guard('bulk.delete', async () => (await affected(ctx.db, sql`delete from ${t.bulk_operations} where id = ${encodeText(id)}`)) > 0),
  };
}
