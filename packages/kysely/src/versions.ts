import { sql } from 'kysely';
import { CairnError, type Json } from '@cairn/core';
import type { VersionRecord, VersionStatus } from '@cairn/core/backend';
import { encodeJsonRequired } from './codec/json.js';
import { toVersionRecord } from './codec/rows.js';
import { encodeText } from './codec/text.js';
import { affected, first, guard, rows, type StoreContext } from './context.js';
import type { AnyKysely } from './dialect/types.js';
import type { VersionRow } from './schema/tables.js';

async function readVersion(ctx: StoreContext, executor: AnyKysely, workflow: string, version: string) {
  const row = await first(
    executor,
    sql<VersionRow>`select * from ${ctx.t.versions} where workflow = ${encodeText(workflow)} and version = ${encodeText(version)}`,
  );
  return row === undefined ? undefined : toVersionRecord(row);
}

/** The store's `versions` noun: primary key (workflow, version). */
export function versionsOf(ctx: StoreContext) {
  const { t, dialect } = ctx;
  return {
    /** An upsert that keeps `status` and `created_at` of an existing row; safe to race. */
    upsert: (workflow: string, version: string, descriptor: Json, now: number) =>
      guard('versions.upsert', async (): Promise<VersionRecord> => {
        const upsert = sql`insert into ${t.versions} (workflow, version, status, descriptor_json, created_at, updated_at)
          values (${encodeText(workflow)}, ${encodeText(version)}, 'active', ${encodeJsonRequired(descriptor)}, ${now}, ${now})
          ${dialect.upsertTail(['workflow', 'version'], ['descriptor_json', 'updated_at'])}`;
        if (dialect.returning) {
          const [row] = await rows(ctx.db, sql<VersionRow>`${upsert} returning *`);
          if (row) return toVersionRecord(row);
        }
        return dialect.transaction(ctx.db, async (trx) => {
          await upsert.execute(trx);
          const record = await readVersion(ctx, trx, workflow, version);
          if (record === undefined) throw new CairnError('STORE_ERROR', `versions.upsert: ${workflow}@${version} vanished`);
          return record;
        });
      }),

    get: (workflow: string, version: string) => guard('versions.get', () => readVersion(ctx, ctx.db, workflow, version)),

    list: (workflow: string) =>
      guard('versions.list', async () => {
        const found = await rows(ctx.db, sql<VersionRow>`select * from ${t.versions} where workflow = ${encodeText(workflow)} order by created_at, version`);
        return found.map(toVersionRecord);
      }),

    setStatus: (workflow: string, version: string, status: VersionStatus, now: number) =>
      guard('versions.setStatus', async (): Promise<VersionRecord> => {
        const update = sql`update ${t.versions} set status = ${status}, updated_at = ${now}
          where workflow = ${encodeText(workflow)} and version = ${encodeText(version)}`;
        let record: VersionRecord | undefined;
        if (dialect.returning) {
          const [row] = await rows(ctx.db, sql<VersionRow>`${update} returning *`);
          record = row === undefined ? undefined : toVersionRecord(row);
        } else {
          record = await dialect.transaction(ctx.db, async (trx) =>
            (await affected(trx, update)) === 0 ? undefined : readVersion(ctx, trx, workflow, version),
          );
        }
        if (record === undefined) {
          throw new CairnError('VERSION_NOT_FOUND', `Version ${version} of ${workflow} is not registered`, { data: { workflow, version } });
        }
        return record;
      }),
  };
}
