// The pre-deploy check (issue 27, part 3): every non-terminal run of the candidate build's
// workflows (and, on request, the newest ended ones) replayed against the candidate code, reading
// the store only, in pages, a few runs at a time, so memory stays bounded whatever the store holds.
import { withHandlerInput } from '../engine/flow/start-windows.js';
import { CairnError } from '../errors/cairn-error.js';
import type { AnyWorkflowDefinition } from '../engine/define/any-workflow-definition.js';
import { invalidInput } from '../engine/check-input.js';
import { WorkflowRegistry } from '../engine/workflow-registry.js';
import type { RunStatus, RunSummary } from '../model/run.js';
import type { WorkflowStore } from '../store/workflow-store.js';
import { replayRunHistory } from './replay-history.js';
import type { RunVerdict, Verdict } from './run-verdict.js';

/** Options of `checkRuns` and `checkWorkflowCode`. */
export interface CheckOptions {
  /** The store whose runs are checked; only read. */
  store: WorkflowStore;
  /** The candidate build's workflow definitions (every version it will register). */
  workflows: readonly AnyWorkflowDefinition[];
  /** Also replay the newest `recent` ended runs of each workflow (regression fixtures from the store). Default 0. */
  recent?: number;
  /** Runs read per page (1..1000, default 200). */
  pageSize?: number;
  /** Runs replayed at once (1..64, default 8): store reads overlap while one replays. */
  concurrency?: number;
}

/** What `checkWorkflowCode` found. */
export interface CheckReport {
  /** Runs replayed. */
  checked: number;
  /** Runs per verdict. */
  counts: Record<Verdict, number>;
  /** Every run's verdict, in the order they were checked (per workflow, newest first). */
  runs: RunVerdict[];
}

const IN_FLIGHT: RunStatus[] = ['pending', 'running', 'waiting'];
const ENDED: RunStatus[] = ['completed', 'failed', 'cancelled'];

function checkCount(what: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw invalidInput(what, `must be an integer from ${min} to ${max}`, value);
  return value;
}

/**
 * Replays, with no side effect, every non-terminal run of the workflows in `options.workflows`
 * (and the newest `recent` ended runs of each) against that code, and yields one verdict per run
 * as it is decided. The store is only read (`runs.list`, `runs.get`, `steps.load`, `state.get`).
 * Throws `INVALID_INPUT` for bad options before reading anything.
 */
export async function* checkRuns(options: CheckOptions): AsyncGenerator<RunVerdict> {
  if (typeof options !== 'object' || options === null) throw invalidInput('checkRuns options', 'must be an object', options);
  const registry = new WorkflowRegistry(options.workflows as AnyWorkflowDefinition[]);
  if (registry.names().length === 0) throw new CairnError('INVALID_INPUT', 'checkRuns: the candidate build defines no workflow');
  const recent = checkCount('checkRuns recent', options.recent, 0, 10_000, 0);
  const pageSize = checkCount('checkRuns pageSize', options.pageSize, 1, 1000, 200);
  const concurrency = checkCount('checkRuns concurrency', options.concurrency, 1, 64, 8);
  const { store } = options;
  for (const workflow of registry.names()) {
    const groups: { status: RunStatus[]; max: number }[] = [{ status: IN_FLIGHT, max: Number.POSITIVE_INFINITY }];
    if (recent > 0) groups.push({ status: ENDED, max: recent });
    for (const group of groups) {
      let cursor: string | undefined;
      let seen = 0;
      do {
        const limit = Math.min(pageSize, group.max - seen);
        const page = await store.runs.list({ workflow, status: group.status, limit, ...(cursor === undefined ? {} : { cursor }) });
        seen += page.runs.length;
        cursor = page.nextCursor;
        yield* replayPage(store, registry, page.runs, concurrency);
      } while (cursor !== undefined && seen < group.max);
    }
  }
}

/** Replays a page of runs, `concurrency` at a time, yielding verdicts in the page's order. */
async function* replayPage(store: WorkflowStore, registry: WorkflowRegistry, runs: readonly RunSummary[], concurrency: number): AsyncGenerator<RunVerdict> {
  for (let i = 0; i < runs.length; i += concurrency) {
    const batch = runs.slice(i, i + concurrency).map(async (summary): Promise<RunVerdict | undefined> => {
      const [run, steps] = await Promise.all([store.runs.get(summary.id), store.steps.load(summary.id)]);
      if (run === undefined) return undefined; // deleted since it was listed
      // State is read only if the code asks for it (`ctx.state`): most workflows never do.
      // A debounce or batch run's handler received its window's input, not the stored one.
      return replayRunHistory({ run: await withHandlerInput(store, run), steps, state: () => store.state.get(run.id) }, registry);
    });
    for (const verdict of await Promise.all(batch)) if (verdict !== undefined) yield verdict;
  }
}

/** `checkRuns`, collected: every verdict and the counts. For a test suite or a CI gate. */
export async function checkWorkflowCode(options: CheckOptions): Promise<CheckReport> {
  const counts: Record<Verdict, number> = { compatible: 0, diverges: 0, 'missing-version': 0, unreadable: 0 };
  const runs: RunVerdict[] = [];
  for await (const verdict of checkRuns(options)) {
    counts[verdict.verdict] += 1;
    runs.push(verdict);
  }
  return { checked: runs.length, counts, runs };
}
