import type { AnyWorkflowDefinition } from '../engine/define/any-workflow-definition.js';
import { validatePayload } from './validate-payload.js';

/**
 * A new run's input after its workflow's `input` schema (as it is without one): what the run
 * stores and the handler receives. `input` is what the caller gave, `undefined` already made
 * `null`. A refused input throws `INVALID_INPUT` with the schema's issues in `data.issues` (see
 * `validatePayload`); the caller has written nothing yet. For every start of a run from outside
 * a run (`startRun`, `forkRun` with an input) and from inside one (a child, `continueAsNew`).
 */
export async function workflowInput(def: AnyWorkflowDefinition, input: unknown, what = `input of workflow ${JSON.stringify(def.name)}`): Promise<unknown> {
  const schema = def.options.input;
  if (schema === undefined) return input;
  return validatePayload(schema, input, { code: 'INVALID_INPUT', what, root: 'input', data: { argument: 'input', workflow: def.name } });
}
