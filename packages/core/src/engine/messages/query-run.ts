// `engine.query`: the latest value a run exposed (`ctx.expose`), read from the store without waking
// the run (decision 70). Each expose is the next entry of the stream `$query:<name>`, written once
// (a replay writes nothing again), so the answer only moves forward: it is the value of the run's
// latest recorded expose, never an earlier one come back.
import { CairnError } from '../../errors/cairn-error.js';
import type { Json } from '../../model/json.js';
import type { WorkflowStore } from '../../store/workflow-store.js';
import { checkIdentifier, checkRunId } from '../check-input.js';
import { MAX_QUERY_NAME, queryStreamName } from './reserved-streams.js';
import { streamsOf } from './stream-reader.js';

/** What `engine.query` answers: the latest value the run exposed under a name. */
export interface QueryAnswer<T = Json> {
  /** The value, as its JSON round trip. */
  readonly value: T;
  /** Which expose of the name this was (0: the first). */
  readonly index: number;
  /** When the run wrote it. */
  readonly exposedAt: number;
}

/** Entries read per store read, from the last one known. */
const PAGE = 100;

/**
 * `engine.query`: the run's latest exposed value of `name`, or `undefined` when it never exposed
 * that name. `RUN_NOT_FOUND` for an unknown run; `INVALID_INPUT` for bad arguments; reads only.
 */
export async function queryRun(store: WorkflowStore, rawRunId: unknown, rawName: unknown): Promise<QueryAnswer | undefined> {
  const runId = checkRunId('query runId', rawRunId);
  const name = checkIdentifier('query name', rawName, MAX_QUERY_NAME);
  const streams = streamsOf(store, 'query');
  const stream = queryStreamName(name);
  const summary = (await streams.list(runId)).find((s) => s.stream === stream);
  if (summary === undefined || summary.length === 0) {
    if ((await store.runs.get(runId)) === undefined) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
    return undefined;
  }
  // Values exposed since the listing come after it: the last entry read is the latest.
  let latest = undefined as QueryAnswer | undefined;
  for (let from = summary.length - 1; ; ) {
    const entries = (await streams.read(runId, stream, from, PAGE)).filter((e) => e.closed !== true);
    for (const e of entries) latest = { value: e.data ?? null, index: e.index, exposedAt: e.writtenAt };
    if (entries.length < PAGE) return latest;
    from += entries.length;
  }
}
