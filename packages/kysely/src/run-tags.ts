import { sql, type RawBuilder } from 'kysely';

import { decideTagWrite, mergeTags, type RunTags, type TagWrite } from '@cairn/core/backend';
import { decodeJson, encodeJsonRequired, toNumber, toOptionalNumber } from './codec/json.js';
import { encodeText, keyHash } from './codec/text.js';
import { checkWritable, first, guard, type StoreContext } from './context.js';
import type { AnyKysely } from './dialect/types.js';

/**
 * The `run_tags.tag_hash` of a tag: the SHA-256 of its key and value as one JSON array, so no two
 * different tags share a hash input (a separator could occur inside a key), whatever their lengths.
 */
export function tagHash(key: string, value: string): string {
  return keyHash(JSON.stringify([key, value]));
}

/** The `run_tags` rows of `tags` for run `id` (stored form) created at `createdAt`, as one insert; nothing when there are none. */
export async function insertTagRows(executor: AnyKysely, ctx: StoreContext, id: string, createdAt: number, tags: RunTags): Promise<void> {
  const keys = Object.keys(tags);
  if (keys.length === 0) return;
  const values = keys.map((key) => {
    const value = tags[key] as string;
    return sql`(${id}, ${tagHash(key, value)}, ${encodeText(key)}, ${encodeText(value)}, ${createdAt})`;
  });
  await sql`insert into ${ctx.t.run_tags} (run_id, tag_hash, tag_key, tag_value, run_created_at) values ${sql.join(values)}`.execute(executor);
}

/**
 * The conditions that a run carries each of `tags`: the first tag drives the listing through the
 * `run_tags_find` index (alias `g0`); each further one is an `exists` on the primary key
 * (`run_id`, `tag_hash`). Key and value are compared too, so a hash collision could never match.
 */
export function tagJoin(ctx: StoreContext, tags: RunTags): { join: RawBuilder<unknown>; where: RawBuilder<unknown>[] } {
  const keys = Object.keys(tags);
  const match = (alias: string, key: string) => {
    const value = tags[key] as string;
    const a = sql.raw(alias);
    return sql`${a}.tag_hash = ${tagHash(key, value)} and ${a}.tag_key = ${encodeText(key)} and ${a}.tag_value = ${encodeText(value)}`;
  };
  const [lead, ...rest] = keys as [string, ...string[]];
  return {
    join: sql`join ${ctx.t.run_tags} g0 on g0.run_id = r.id and ${match('g0', lead)}`,
    where: rest.map(
      (key, i) =>
        sql`exists (select 1 from ${ctx.t.run_tags} ${sql.raw(`g${i + 1}`)} where ${sql.raw(`g${i + 1}`)}.run_id = r.id and ${match(`g${i + 1}`, key)})`,
    ),
  };
}

/**
 * `runs.setTags`: one transaction that locks the run row, checks the fence and the write's place
 * (`decideTagWrite`), then writes the merged tags and `tag_writes` and replaces the run's
 * `run_tags` rows. A replayed place writes nothing.
 */
export function setRunTags(ctx: StoreContext) {
  const { t, dialect } = ctx;
  return (runId: string, fence: number, write: TagWrite) =>
    guard('runs.setTags', () =>
      dialect.transaction(ctx.db, async (trx) => {
        const id = encodeText(runId);
        const row = await first(
          trx,
          sql<{
            fence: number | string;
            status: string;
            created_at: number | string;
            tags_json: string | null;
            tag_writes: number | string | null;
          }>`select fence, status, created_at, tags_json, tag_writes from ${t.runs} where id = ${id} ${dialect.lockForUpdate()}`,
        );
        checkWritable(runId, fence, row);
        const run = row as NonNullable<typeof row>;
        if (!decideTagWrite(runId, toOptionalNumber(run.tag_writes), write)) return { applied: false };
        const tags = mergeTags(decodeJson<RunTags>(run.tags_json), write.tags);
        await sql`update ${t.runs} set tags_json = ${encodeJsonRequired(tags)}, tag_writes = ${write.seq + 1} where id = ${id}`.execute(trx);
        await sql`delete from ${t.run_tags} where run_id = ${id}`.execute(trx);
        await insertTagRows(trx, ctx, id, toNumber(run.created_at), tags);
        return { applied: true };
      }),
    );
}
