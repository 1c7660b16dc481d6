import { sql } from 'kysely';
import type { ScheduleRecord } from '@cairn/core/backend';
import { decodeJson, encodeJsonRequired, toNumber } from './codec/json.js';
import { decodeText, encodeText } from './codec/text.js';
import { affected, first, guard, insertedOnce, rows, type StoreContext } from './context.js';
import type { ScheduleRow } from './schema/tables.js';

function toScheduleRecord(row: ScheduleRow): ScheduleRecord {
  const record = decodeJson<ScheduleRecord>(row.record_json)!;
  // The columns are the truth for what the store itself maintains.
  return { ...record, name: decodeText(row.name), revision: toNumber(row.revision), dueAt: row.due_at === null ? null : toNumber(row.due_at) };
}

/** The store's `schedules` noun: primary key `name`, every change a compare-and-set on `revision`. */
export function schedulesOf(ctx: StoreContext) {
  const { t, dialect } = ctx;
  const read = (name: string) =>
    first(ctx.db, sql<ScheduleRow>`select * from ${t.schedules} where name = ${encodeText(name)}`).then((row) =>
      row === undefined ? undefined : toScheduleRecord(row),
    );
  return {
    create: (schedule: ScheduleRecord) =>
      guard('schedules.create', async () => {
        const record = { ...schedule, revision: 1 };
        const insert = sql`insert into ${t.schedules} (name, revision, due_at, record_json)
          values (${encodeText(record.name)}, 1, ${record.dueAt}, ${encodeJsonRequired(record as never)}) ${dialect.onConflictDoNothing()}`;
        // Not inserted: another create won.
        if (await insertedOnce(ctx, insert)) return { schedule: record, created: true };
        const existing = await read(record.name);
        // Deleted between the two statements: the caller's create may try again.
        return { schedule: existing ?? record, created: existing === undefined };
      }),

    get: (name: string) => guard('schedules.get', () => read(name)),

    list: ({ limit, after }: { limit: number; after?: string }) =>
      guard('schedules.list', async () => {
        const where = after === undefined ? sql`` : sql`where name > ${encodeText(after)}`;
        const found = await rows(ctx.db, sql<ScheduleRow>`select * from ${t.schedules} ${where} order by name limit ${limit}`);
        return found.map(toScheduleRecord);
      }),

    update: (schedule: ScheduleRecord, expectedRevision: number) =>
      guard('schedules.update', async () => {
        const record = { ...schedule, revision: expectedRevision + 1 };
        const changed = await affected(
          ctx.db,
          sql`update ${t.schedules} set revision = ${record.revision}, due_at = ${record.dueAt}, record_json = ${encodeJsonRequired(record as never)}
            where name = ${encodeText(record.name)} and revision = ${expectedRevision}`,
        );
        return changed > 0 ? record : undefined;
      }),

    delete: (name: string) =>
      guard('schedules.delete', async () => (await affected(ctx.db, sql`delete from ${t.schedules} where name = ${encodeText(name)}`)) > 0),

    findDue: (now: number, limit: number) =>
      guard('schedules.findDue', async () => {
        const found = await rows(
          ctx.db,
          sql<ScheduleRow>`select * from ${t.schedules} where due_at is not null and due_at <= ${now} order by due_at, name limit ${limit}`,
        );
        return found.map(toScheduleRecord);
      }),
  };
}
