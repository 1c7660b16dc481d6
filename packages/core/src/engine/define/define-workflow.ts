import { CairnError } from '../../errors/cairn-error.js';
import type { JsonGate } from '../../serialization/json-types.js';
import type { StandardSchemaV1 } from '../../validation/standard-schema.js';
import { isStandardSchema, validatePayload } from '../../validation/validate-payload.js';
import { IDENTIFIER_LIMITS, checkIdentifier, checkOptions } from '../check-input.js';
import { toMilliseconds } from './duration.js';
import { checkConcurrency, checkRateLimit } from '../flow/flow-options.js';
import { checkStartGate } from '../flow/start-gate.js';
import type { WorkflowContext, WorkflowDefinition } from './workflow-context.js';
import type { WorkflowOptions } from './workflow-options.js';

export type { WorkflowDefinition } from './workflow-context.js';
export type { WorkflowOptions } from './workflow-options.js';

/**
 * Defines a workflow. The handler is plain async code; use `ctx` for everything that must survive a
 * crash. Its input and output are JSON payloads (docs/semantics.md, Payloads): an input or output
 * type JSON cannot carry (a `Date`, a `Map`, a class instance with methods, a function, a bigint)
 * is a compile error naming the part, as the engine would refuse it at run time. `input` and
 * `output` take Standard Schemas, which check (and may transform) the input at `startRun` and the
 * output when the handler returns; the types follow them.
 *
 * Throws `INVALID_INPUT` when the name (at most 200 characters) or version (at most 100) is not an
 * identifier (see `checkIdentifier`: non-empty, well-formed UTF-16, no NUL), when an option is
 * unknown or not a string, when `concurrency`, `rateLimit`, `singleton`, `debounce` or `batch` is malformed (or more than one of the last three is given) (a limit outside
 * 1..10,000, a period under 1 ms, a key that is not a function), when `input` or `output` is not a
 * Standard Schema (v1), or when the handler is not a function.
 */
export function defineWorkflow<I = unknown, O = unknown, In = I, Out = O>(
  name: string,
  handler: ((ctx: WorkflowContext, input: I) => Promise<O>) & JsonGate<I, 'workflow input'> & JsonGate<Out, 'workflow output'>,
  options: WorkflowOptions<I> & { input?: StandardSchemaV1<In, I>; output?: StandardSchemaV1<O, Out> } = {},
): WorkflowDefinition<In, Out, I> {
  checkIdentifier('Workflow name', name, IDENTIFIER_LIMITS.workflowName);
  checkOptions(`Workflow ${JSON.stringify(name)} options`, options, [
    'version',
    'tier',
    'description',
    'deadline',
    'concurrency',
    'rateLimit',
    'singleton',
    'debounce',
    'batch',
    'input',
    'output',
  ]);
  checkConcurrency(`Workflow ${JSON.stringify(name)} concurrency`, options.concurrency);
  checkRateLimit(`Workflow ${JSON.stringify(name)} rateLimit`, options.rateLimit);
  checkStartGate(`Workflow ${JSON.stringify(name)}`, options, true);
  if (options.deadline !== undefined) toMilliseconds(options.deadline, `Workflow ${JSON.stringify(name)} deadline`);
  const version = checkIdentifier(`Workflow ${JSON.stringify(name)} version`, options.version === undefined ? '1' : options.version, IDENTIFIER_LIMITS.version);
  if (options.tier !== undefined) checkIdentifier(`Workflow ${JSON.stringify(name)} tier`, options.tier, IDENTIFIER_LIMITS.workflowName);
  if (options.description !== undefined && typeof options.description !== 'string') {
    throw new CairnError('INVALID_INPUT', `Workflow ${JSON.stringify(name)}: description must be a string`);
  }
  if (typeof handler !== 'function') throw new CairnError('INVALID_INPUT', `Workflow ${name}: handler must be a function`);
  for (const which of ['input', 'output'] as const) {
    if (options[which] !== undefined && !isStandardSchema(options[which])) {
      throw new CairnError(
        'INVALID_INPUT',
        `Workflow ${JSON.stringify(name)} ${which}: must be a Standard Schema (an object with a "~standard" property, version 1)`,
        {
          data: { argument: `Workflow ${JSON.stringify(name)} ${which}` },
        },
      );
    }
  }
  const { output } = options;
  // The output schema is applied where the handler returns, so a refusal fails the run as any
  // error the handler throws would: recorded, compensations run.
  const run =
    output === undefined
      ? (handler as unknown as (ctx: WorkflowContext, input: I) => Promise<Out>)
      : async (ctx: WorkflowContext, input: I): Promise<Out> =>
          (await validatePayload(output, await handler(ctx, input), {
            code: 'INVALID_OUTPUT',
            what: `output of workflow ${JSON.stringify(name)}`,
            root: 'output',
            data: { workflow: name },
          })) as Out;
  return Object.freeze({ name, version, options: Object.freeze({ ...options }), handler: run });
}
