// One run's history replayed against a candidate build's code with no side effect: the engine's
// own replay (`Execution` in check mode) on a runtime that only reads (check-runtime.ts). The
// pre-deploy check, exported runs replayed as regression tests and the divergence report are this
// one function (DESIGN §9), so the check's verdict is what resuming the run would do.
import { CHECK_PROBE_KEY } from '../engine/execution/call.js';
import { Execution } from '../engine/execution/execution.js';
import type { WorkflowRegistry } from '../engine/workflow-registry.js';
import type { Json } from '../model/json.js';
import type { RunRecord } from '../model/run.js';
import type { StepKind, StepRecord } from '../model/step.js';
import { checkRuntime } from './check-runtime.js';
import type { RunVerdict } from './run-verdict.js';

/** What a check reads of one run: the run, its steps, and its state (`ctx.state` reads it; a function is called only then). */
export interface RunHistory {
  run: RunRecord;
  steps: readonly StepRecord[];
  state: Record<string, Json> | (() => Promise<Record<string, Json>>);
}

const KNOWN_KINDS: ReadonlySet<StepKind> = new Set<StepKind>(['task', 'sleep', 'event', 'child', 'select', 'now', 'random', 'uuid', 'patch']);

/** How long one replay may take before it is reported `unreadable` (code that awaits something that never settles). */
export const REPLAY_LIMIT_MS = 10_000;

/** Replays `history` against the definitions in `registry` and says whether the code still fits it. */
export async function replayRunHistory(history: RunHistory, registry: WorkflowRegistry, maxPayloadBytes = Number.MAX_SAFE_INTEGER): Promise<RunVerdict> {
  const { run } = history;
  const base = { runId: run.id, workflow: run.workflow, version: run.version, status: run.status };
  const def = registry.find(run.workflow, run.version);
  if (def === undefined) {
    return {
      ...base,
      verdict: 'missing-version',
      reason: `the candidate build defines no version ${JSON.stringify(run.version)} of ${JSON.stringify(run.workflow)}`,
    };
  }
  const unknown = history.steps.find((step) => !KNOWN_KINDS.has(step.kind));
  if (unknown !== undefined) {
    return {
      ...base,
      verdict: 'unreadable',
      reason: `step ${JSON.stringify(unknown.key)} has kind ${JSON.stringify(unknown.kind)}, which this build of Cairn does not know (written by a newer one?)`,
    };
  }
  const execution = new Execution(checkRuntime(registry, history.state, maxPayloadBytes), run, history.steps, def, CHECK_PROBE_KEY);
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), REPLAY_LIMIT_MS);
    timer.unref?.();
  });
  try {
    const outcome = await Promise.race([execution.start(), limit]);
    if (outcome === 'timeout') {
      execution.crash(new Error('check replay timed out'));
      return {
        ...base,
        verdict: 'unreadable',
        reason: `the replay did not end within ${REPLAY_LIMIT_MS} ms (the code awaits something that is not a Cairn primitive and never settles)`,
      };
    }
    if (outcome.kind === 'checked')
      return outcome.divergence === undefined ? { ...base, verdict: 'compatible' } : { ...base, verdict: 'diverges', divergence: outcome.divergence };
    const why = outcome.kind === 'crashed' ? String((outcome.error as Error)?.message ?? outcome.error) : outcome.kind;
    return { ...base, verdict: 'unreadable', reason: `the replay ended as ${outcome.kind}: ${why}` };
  } finally {
    clearTimeout(timer);
  }
}
