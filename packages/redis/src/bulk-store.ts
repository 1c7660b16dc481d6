import type { BulkOperationRecord, BulkStore } from '@cairn/core/backend';
import type { StoreContext } from './context.js';

const parse = (text: unknown): BulkOperationRecord => JSON.parse(String(text)) as BulkOperationRecord;

/** The `bulk` part: records in one hash, indexed by id for newest-first paging (see `bulk-scripts.lua.ts`). */
export function createBulkStore(ctx: StoreContext): BulkStore {
  const k = ctx.keys;
  const records = `${k.global}:bulk`;
  const ids = `${k.global}:bulk:ids`;
  return {
    async create(operation) {
      const record = { ...operation, revision: 1 };
      const reply = (await ctx.caller.script(ctx.scripts.createBulk, [records, ids], [record.id, JSON.stringify(record)])) as unknown[];
      return { operation: parse(reply[1]), created: Number(reply[0]) === 1 };
    },
    async get(id) {
      const text = await ctx.caller.command('bulk.get', 'HGET', [records, id]);
      return text === null || text === undefined ? undefined : parse(text);
    },
    async list({ limit, before }) {
      const reply = await ctx.caller.script(ctx.scripts.readBulk, [records, ids], [before === undefined ? '+' : `(${before}`, String(limit)]);
      return (Array.isArray(reply) ? reply : []).map(parse);
    },
    async update(operation, expectedRevision) {
      const record = { ...operation, revision: expectedRevision + 1 };
      const written = await ctx.caller.script(ctx.scripts.updateBulk, [records], [record.id, String(expectedRevision), JSON.stringify(record)]);
      return Number(written) === 1 ? record : undefined;
    },
    async delete(id) {
      return Number(await ctx.caller.script(ctx.scripts.deleteBulk, [records, ids], [id])) === 1;
    },
  };
}
