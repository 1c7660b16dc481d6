// The memory store's run reads: one run, a page of runs, due runs, a run by idempotency key, ended
// runs for retention (see `RunStore`).
import type { DueRun, EndedRun, EndedRunPage, EndedRunQuery, RunPage, RunQuery } from '../model/run.js';
import { toRunSummary } from '../store/run-summary.js';
import { matchesRunQuery } from '../store/matches-run-query.js';
import { decodeEndedCursor, encodeEndedCursor } from '../store/ended-cursor.js';
import { decodeRunCursor, encodeRunCursor, normaliseListLimit } from '../store/run-cursor.js';
import type { RunStore } from '../store/workflow-store.js';
import { copy, type MemoryData } from './memory-data.js';

/** The reads of `RunStore` over the memory store's data. */
export function memoryRunReads(data: MemoryData): Pick<RunStore, 'get' | 'list' | 'findDue' | 'findByIdempotencyKey' | 'listEnded'> {
  return {
    async get(runId) {
      return copy(data.entry(runId)?.run);
    },

    async list(query: RunQuery): Promise<RunPage> {
      const limit = normaliseListLimit(query.limit);
      const after = query.cursor === undefined ? undefined : decodeRunCursor(query.cursor);
      const matches = [...data.candidates(query)]
        .map((e) => e.run)
        .filter((r) => matchesRunQuery(r, query, after))
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      const page = matches.slice(0, limit);
      const last = page[page.length - 1];
      const result: RunPage = { runs: page.map((run) => toRunSummary(copy(run))) };
      if (matches.length > limit && last) result.nextCursor = encodeRunCursor(last);
      return result;
    },

    async findDue(now, limit): Promise<DueRun[]> {
      const due: Array<DueRun & { at: number }> = [];
      for (const { run } of data.runs.values()) {
        if (run.paused !== undefined) continue;
        if ((run.status === 'pending' || run.status === 'waiting') && run.wakeAt !== undefined && run.wakeAt <= now) {
          due.push({ id: run.id, workflow: run.workflow, reason: 'wake', at: run.wakeAt });
        } else if (run.status === 'running' && run.lease && run.lease.expiresAt <= now) {
          due.push({ id: run.id, workflow: run.workflow, reason: 'lease-expired', at: run.lease.expiresAt });
        }
      }
      return due
        .sort((a, b) => a.at - b.at)
        .slice(0, limit)
        .map(({ id, workflow, reason }) => ({ id, workflow, reason }));
    },

    async findByIdempotencyKey(workflow, idempotencyKey) {
      const id = data.idempotency.get(workflow, idempotencyKey);
      return id === undefined ? undefined : copy(data.runs.get(id)?.run);
    },

    async listEnded(query: EndedRunQuery): Promise<EndedRunPage> {
      const after = query.cursor === undefined ? undefined : decodeEndedCursor(query.cursor);
      const matches = [...data.runs.values()]
        .map((e) => e.run)
        .filter(
          (r) =>
            r.status === query.status &&
            r.updatedAt < query.updatedBefore &&
            (after === undefined || r.updatedAt > after.at || (r.updatedAt === after.at && r.id > after.id)),
        )
        .sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const batch: EndedRun[] = matches
        .slice(0, query.limit)
        .map((r) => ({ id: r.id, workflow: r.workflow, status: r.status, updatedAt: r.updatedAt, ...(r.parent ? { parent: { ...r.parent } } : {}) }));
      const last = batch[batch.length - 1];
      return matches.length > query.limit && last ? { runs: batch, nextCursor: encodeEndedCursor({ at: last.updatedAt, id: last.id }) } : { runs: batch };
    },
  };
}
