import { deepStrictEqual } from 'node:assert/strict';
import type { RunRecord, StepRecord } from '@cairn/core';
import type { ScaleTarget } from './scale-targets.js';
import { STATUS_MIX } from './scale-workflows.js';

/** A record with its run id, workflow and times taken out (what a copy changes), the id in texts made neutral. */
function neutral(value: unknown, runId: string, shift: number): unknown {
  if (typeof value === 'string') return value.split(runId).join('<run>');
  if (Array.isArray(value)) return value.map((v) => neutral(v, runId, shift));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      // The workflow and the tags are the copy's own (checked apart, below).
      if (key === 'workflow' || key === 'tags') continue;
      out[key] = key.endsWith('At') && typeof v === 'number' ? v - shift : neutral(v, runId, shift);
    }
    return out;
  }
  return value;
}

/**
 * Checks that the engine reads loaded runs exactly as it reads the runs it wrote itself: for each
 * status, one loaded run (found through `listRuns`, as a user would) has the same record
 * (`getRun`) and the same steps (`engine.steps`) as its template, apart from its id, workflow and
 * times, which the copy moves by one amount. Returns the ids checked; throws on any difference.
 */
export async function verifyLoaded(target: ScaleTarget): Promise<string[]> {
  const checked: string[] = [];
  for (const { status } of STATUS_MIX) {
    const page = await target.engine.listRuns({ status, workflow: 'scale-w7', limit: 1 });
    const found = page.runs[0];
    if (!found) throw new Error(`no loaded ${status} run of scale-w7 to verify`);
    const copy = (await target.engine.getRun(found.id)) as RunRecord;
    const template = (await target.engine.getRun(target.templates[status])) as RunRecord;
    if (copy.workflow !== 'scale-w7') throw new Error(`loaded run ${copy.id} reads back as workflow ${copy.workflow}`);
    const shift = copy.createdAt - template.createdAt;
    deepStrictEqual(neutral(copy, copy.id, shift), neutral(template, template.id, 0), `loaded ${status} run ${copy.id} differs from its template`);
    if (template.tags !== undefined) {
      // Its own tags, and findable by them as a run the engine tagged is.
      if (copy.tags === undefined || Object.keys(copy.tags).join() !== Object.keys(template.tags).join())
        throw new Error(`loaded run ${copy.id} has tags ${JSON.stringify(copy.tags)}, not the template's keys ${Object.keys(template.tags).join()}`);
      const byTags = await target.engine.listRuns({ tags: copy.tags, createdAfter: copy.createdAt, createdBefore: copy.createdAt + 1, limit: 5 });
      if (!byTags.runs.some((run) => run.id === copy.id)) throw new Error(`loaded run ${copy.id} is not found by its tags ${JSON.stringify(copy.tags)}`);
    }
    const steps: StepRecord[] = await target.engine.steps(copy.id);
    const templateSteps: StepRecord[] = await target.engine.steps(template.id);
    if (steps.length === 0 && templateSteps.length > 0) throw new Error(`loaded run ${copy.id} has no steps`);
    deepStrictEqual(
      neutral(steps, copy.id, shift),
      neutral(templateSteps, template.id, 0),
      `loaded ${status} run ${copy.id}: steps differ from its template's`,
    );
    checked.push(copy.id);
  }
  return checked;
}
