import { CairnError, type Engine } from '@cairn/core';
import type { BulkAction } from '@cairn/core/backend';

/**
 * `POST /api/bulk` `{ action, runIds?, filter?, reason?, dryRun? }`: one `engine.bulk` over the runs
 * selected in the table (`runIds`) or a filter, answered with the result (the record, the counts,
 * every run's outcome). The engine checks everything; only the body's shape is checked here.
 */
export async function answerBulk(engine: Engine, body: Record<string, unknown>): Promise<{ status: number; body: object }> {
  for (const key of Object.keys(body)) {
    if (!['action', 'runIds', 'filter', 'reason', 'dryRun'].includes(key))
      throw new CairnError('INVALID_INPUT', `the bulk request has no field ${JSON.stringify(key)}`);
  }
  const filter = body.filter ?? {};
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) throw new CairnError('INVALID_INPUT', 'filter must be an object');
  const result = await engine.bulk({
    action: body.action as BulkAction,
    filter: body.runIds === undefined ? (filter as object) : { ...(filter as object), runIds: body.runIds as string[] },
    ...(body.reason === undefined || body.reason === '' ? {} : { reason: body.reason as string }),
    ...(body.dryRun === undefined ? {} : { dryRun: body.dryRun as boolean }),
  });
  return { status: 200, body: result };
}
