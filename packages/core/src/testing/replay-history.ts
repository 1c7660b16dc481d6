// Exported runs as regression tests (issue 27, part 5): `replayHistory` replays a run exported with
// `cairn export` (a file, or the parsed document) against the workflow code under test and gives
// the same verdict as `cairn check`, for node:test or any runner; `replayHistoryFolder` does it
// for every `.json` file of a folder.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CairnError } from '../errors/cairn-error.js';
import type { AnyWorkflowDefinition } from '../engine/define/any-workflow-definition.js';
import { WorkflowRegistry } from '../engine/workflow-registry.js';
import { replayRunHistory } from '../check/replay-history.js';
import { readRunExport } from '../check/run-export.js';
import type { RunVerdict } from '../check/run-verdict.js';

/** A replayed export: the verdict, and the file it came from (when it came from one). */
export interface ReplayedHistory extends RunVerdict {
  file?: string;
}

async function readExportFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CairnError('INVALID_INPUT', `Cannot read run export ${file}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CairnError('INVALID_INPUT', `Run export ${file} is not JSON: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Replays an exported run (a path to a `cairn export` file, or the parsed document) against
 * `workflows`, with no side effect, and resolves with its verdict: `compatible`, `diverges` (with
 * the divergence), `missing-version` or `unreadable`. `INVALID_INPUT` for a file that is not an
 * export this build can read.
 */
export async function replayHistory(source: string | object, workflows: readonly AnyWorkflowDefinition[]): Promise<ReplayedHistory> {
  const registry = new WorkflowRegistry(workflows as AnyWorkflowDefinition[]);
  if (typeof source === 'string') {
    const history = readRunExport(await readExportFile(source), source);
    return { ...(await replayRunHistory(history, registry)), file: source };
  }
  return replayRunHistory(readRunExport(source), registry);
}

/** `replayHistory` for every `.json` file directly in `folder`, in name order. */
export async function replayHistoryFolder(folder: string, workflows: readonly AnyWorkflowDefinition[]): Promise<ReplayedHistory[]> {
  const names = (await readdir(folder)).filter((name) => name.endsWith('.json')).sort();
  const verdicts: ReplayedHistory[] = [];
  for (const name of names) verdicts.push(await replayHistory(join(folder, name), workflows));
  return verdicts;
}
