// What an engine reads back about runs: a run, a page of runs, its outcome (waiting for it), its
// steps, state, history, timeline and streams. Each argument is checked before the store is read.
import { CairnError } from '../../errors/cairn-error.js';
import { IDENTIFIER_LIMITS, checkIdentifier, checkOptions, checkRunId, checkRunQuery } from '../check-input.js';
import { tagsUnsupported } from '../check-tags.js';
import { continuedAs } from '../define/continued-as.js';
import { type Duration, toMilliseconds } from '../define/duration.js';
import type { Engine } from '../engine-contract.js';
import type { EngineParts } from '../engine-parts.js';
import { isReservedStream } from '../messages/reserved-streams.js';
import { streamsOf } from '../messages/stream-reader.js';
import { buildRunTimeline } from './run-timeline.js';

type RunReads = Pick<Engine, 'result' | 'getRun' | 'listRuns' | 'findRun' | 'steps' | 'state' | 'history' | 'timeline' | 'listStreams'>;

/** The engine's reads of runs, over its parts. */
export function runReads(parts: EngineParts): RunReads {
  const { rt } = parts;
  return {
    result: <O>(runId: string, options?: { timeout?: Duration }) => resultOf<O>(parts, runId, options),
    // Async, so a refused argument rejects like every other failure instead of throwing at the call.
    getRun: async (runId) => rt.store.runs.get(checkRunId('getRun runId', runId)),
    async listRuns(rawQuery) {
      const query = checkRunQuery(rawQuery);
      if (query.tags !== undefined && rt.store.runs.setTags === undefined) throw tagsUnsupported('listRuns tags', rt.store.name);
      return rt.store.runs.list(query);
    },
    findRun: async (workflow, idempotencyKey) =>
      rt.store.runs.findByIdempotencyKey(
        checkIdentifier('findRun workflow', workflow, IDENTIFIER_LIMITS.workflowName),
        checkIdentifier('findRun idempotencyKey', idempotencyKey, IDENTIFIER_LIMITS.idempotencyKey),
      ),
    steps: async (runId) => rt.store.steps.load(checkRunId('steps runId', runId)),
    state: async (runId) => rt.store.state.get(checkRunId('state runId', runId)),
    history: (runId) => historyOf(parts, runId),
    timeline: (runId) => timelineOf(parts, runId),
    listStreams: (runId) => streamListOf(parts, runId),
  };
}

/** `engine.result`: the run's output once it ends (the last run's, when it continued as new). */
async function resultOf<O>(parts: EngineParts, rawRunId: unknown, rawResultOptions?: { timeout?: Duration }): Promise<O> {
  const { rt, waiter } = parts;
  const { clock, pollIntervalMs } = parts.checked;
  const runId = checkRunId('result runId', rawRunId);
  const resultOptions = checkOptions('result options', rawResultOptions, ['timeout']) as { timeout?: Duration };
  const timeoutMs = resultOptions.timeout === undefined ? undefined : toMilliseconds(resultOptions.timeout, 'result timeout');
  const deadline = timeoutMs === undefined ? undefined : clock.now() + timeoutMs;
  let run = await waiter.wait(rt.store, clock, runId, { timeoutMs, pollIntervalMs });
  // A run that continued as new: its outcome is the last run's of the chain.
  for (let next = continuedAs(run.output); next !== undefined; next = continuedAs(run.output)) {
    run = await waiter.wait(rt.store, clock, next, { timeoutMs: deadline === undefined ? undefined : Math.max(0, deadline - clock.now()), pollIntervalMs });
  }
  return run.output as O;
}

/** `engine.history`: every attempt, with its step's name and kind. */
async function historyOf(parts: EngineParts, rawRunId: unknown) {
  const { rt } = parts;
  const runId = checkRunId('history runId', rawRunId);
  const [steps, attempts] = await Promise.all([rt.store.steps.load(runId), rt.store.history.list(runId)]);
  const byKey = new Map(steps.map((s) => [s.key, s]));
  return attempts.map((a) => ({ ...a, stepName: byKey.get(a.stepKey)?.name ?? a.stepKey, kind: byKey.get(a.stepKey)?.kind ?? 'task' }));
}

/** `engine.timeline`: the run as a tree of steps, waits and children (run-timeline.ts). */
async function timelineOf(parts: EngineParts, rawRunId: unknown) {
  const { rt } = parts;
  const runId = checkRunId('timeline runId', rawRunId);
  const [run, steps, attempts, state] = await Promise.all([
    rt.store.runs.get(runId),
    rt.store.steps.load(runId),
    rt.store.history.list(runId),
    rt.store.state.get(runId),
  ]);
  if (!run) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
  return buildRunTimeline(run, steps, attempts, state);
}

/** `engine.listStreams`: the run's streams, without those Cairn keeps for requests and queries. */
async function streamListOf(parts: EngineParts, rawRunId: unknown) {
  const { rt } = parts;
  const runId = checkRunId('listStreams runId', rawRunId);
  const streams = streamsOf(rt.store, 'listStreams');
  if ((await rt.store.runs.get(runId)) === undefined) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
  // Requests' receipts and replies and exposed values live in streams too (decision 70); they are not the run's output.
  return (await streams.list(runId)).filter((s) => !isReservedStream(s.stream));
}
