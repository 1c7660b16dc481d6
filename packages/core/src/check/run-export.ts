// The exported form of one run's history (`cairn export`, `exportRun`): a versioned JSON document
// that `replayHistory` (in `@cairn/core/testing`) replays against code, so real runs kept in a
// repository become regression tests. docs/versioning.md documents the format.
import { CairnError } from '../errors/cairn-error.js';
import type { Json } from '../model/json.js';
import type { RunRecord } from '../model/run.js';
import type { StepRecord } from '../model/step.js';
import type { WorkflowStore } from '../store/workflow-store.js';
import type { RunHistory } from './replay-history.js';
import { withHandlerInput } from '../engine/flow/start-windows.js';

/** The `format` field of an exported run. */
export const RUN_EXPORT_FORMAT = 'cairn.run-history';
/** The newest `formatVersion` this build writes and reads. */
export const RUN_EXPORT_VERSION = 1;

/**
 * One run's history as a JSON document. Version 1: the run record, every step record (oldest
 * first, as `steps.load` gives them) and the run's state, exactly as the store holds them, except
 * that a debounce or batch run's `input` is the one its handler received (its window's decision).
 */
export interface RunExport {
  format: typeof RUN_EXPORT_FORMAT;
  formatVersion: number;
  /** ISO time of the export. */
  exportedAt: string;
  run: RunRecord;
  steps: StepRecord[];
  state: Record<string, Json>;
}

/** Reads run `runId` from `store` as an export document. `RUN_NOT_FOUND` when it does not exist. */
export async function exportRun(store: WorkflowStore, runId: string, now = Date.now()): Promise<RunExport> {
  const run = await store.runs.get(runId);
  if (run === undefined) throw new CairnError('RUN_NOT_FOUND', `Run ${runId} not found`, { data: { runId } });
  const [steps, state, replayed] = await Promise.all([store.steps.load(runId), store.state.get(runId), withHandlerInput(store, run)]);
  return { format: RUN_EXPORT_FORMAT, formatVersion: RUN_EXPORT_VERSION, exportedAt: new Date(now).toISOString(), run: replayed, steps: [...steps], state };
}

function bad(why: string, where?: string): never {
  throw new CairnError('INVALID_INPUT', `Not a Cairn run export${where === undefined ? '' : ` (${where})`}: ${why}`);
}

/**
 * Checks a parsed export document and returns the history it holds. `INVALID_INPUT` for anything
 * else, naming what is wrong; a `formatVersion` newer than this build's says so.
 */
export function readRunExport(value: unknown, where?: string): RunHistory {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad('expected a JSON object', where);
  const doc = value as Partial<RunExport>;
  if (doc.format !== RUN_EXPORT_FORMAT) bad(`"format" must be ${JSON.stringify(RUN_EXPORT_FORMAT)}`, where);
  if (typeof doc.formatVersion !== 'number' || !Number.isInteger(doc.formatVersion) || doc.formatVersion < 1)
    bad('"formatVersion" must be a positive integer', where);
  if (doc.formatVersion > RUN_EXPORT_VERSION) {
    bad(`format version ${doc.formatVersion} was written by a newer Cairn; this build reads up to ${RUN_EXPORT_VERSION}`, where);
  }
  const run = doc.run as Partial<RunRecord> | undefined;
  if (typeof run !== 'object' || run === null || typeof run.id !== 'string' || typeof run.workflow !== 'string' || typeof run.version !== 'string') {
    bad('"run" must be a run record (id, workflow, version)', where);
  }
  if (!Array.isArray(doc.steps)) bad('"steps" must be an array of step records', where);
  for (const [i, step] of doc.steps.entries()) {
    const s = step as Partial<StepRecord>;
    if (
      typeof s !== 'object' ||
      s === null ||
      typeof s.key !== 'string' ||
      typeof s.kind !== 'string' ||
      typeof s.seq !== 'number' ||
      typeof s.status !== 'string'
    ) {
      bad(`steps[${i}] must be a step record (key, kind, seq, status)`, where);
    }
  }
  const state = doc.state ?? {};
  if (typeof state !== 'object' || state === null || Array.isArray(state)) bad('"state" must be an object', where);
  return { run: run as RunRecord, steps: doc.steps as StepRecord[], state: state as Record<string, Json> };
}
