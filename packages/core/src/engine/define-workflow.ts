import { CairnError } from '../errors/cairn-error.js';
import type { JsonGate } from '../serialization/json-types.js';
import type { StandardSchemaV1 } from '../validation/standard-schema.js';
import { isStandardSchema, validatePayload } from '../validation/validate-payload.js';
import { IDENTIFIER_LIMITS, checkIdentifier, checkOptions } from './check-input.js';
import { type Duration, toMilliseconds } from './duration.js';
import { checkConcurrency, checkRateLimit, type ConcurrencyLimit, type RateLimit } from './flow-options.js';
import type { WorkflowContext } from './workflow-context.js';

/** Options of `defineWorkflow`. */
// biome-ignore lint/suspicious/noExplicitAny: options written apart from a definition (no input type to name) must accept any key function, as `unknown` would refuse `(input: { tenant: string }) => ...`
export interface WorkflowOptions<I = any> {
  /** The version new runs start on (default `'1'`). Runs replay on the version they started with. */
  version?: string;
  /** With the `shared-groups` strategy: the tier of this workflow's job group. */
  tier?: string;
  /** Free-form description stored with the version. */
  description?: string;
  /**
   * The default deadline of a run of this workflow, as a `Duration` from its start (`'1h'`);
   * `startRun`'s `deadline` overrides it. See docs/semantics.md, Deadlines.
   */
  deadline?: Duration;
  /**
   * At most `limit` runs of one key execute at once across every engine on the store; the others
   * wait in line (priority, then creation order). Needs a store with `slots`. See
   * docs/flow-control.md.
   */
  concurrency?: ConcurrencyLimit<I>;
  /**
   * At most `limit` runs of one key start in any window of `period`; the others are held back
   * (never dropped). Needs a store with `slots`. See docs/flow-control.md.
   */
  rateLimit?: RateLimit<I>;
  /**
   * A Standard Schema (zod, valibot, ArkType, ...) for the input: `startRun` validates the input
   * with it before anything is written (`INVALID_INPUT` with the schema's issues in `data.issues`),
   * and the run stores, and the handler receives, the schema's value (a schema may transform). Not
   * applied again on replay. The handler's input type is the schema's output type; `startRun` and
   * `ctx.child` take its input type. See docs/semantics.md, Validation.
   */
  // biome-ignore lint/suspicious/noExplicitAny: any schema, whatever it takes: the definition's types say what it gives
  input?: StandardSchemaV1<any, I>;
  /**
   * A Standard Schema for the output: applied to what the handler returns, when it returns; a
   * refused output fails the run with `INVALID_OUTPUT` (the schema's issues in `data.issues`; the
   * run's compensations run), and the run's output is the schema's value.
   */
  // biome-ignore lint/suspicious/noExplicitAny: any schema; the definition's types say what it takes and gives
  output?: StandardSchemaV1<any, any>;
}

/**
 * A registered workflow: name, version, options and handler. `I` is the input `startRun` and
 * `ctx.child` take, `O` the output the run ends with (`result()` gives its JSON round trip,
 * `Jsonify<O>`), and `HandlerInput` what the handler receives: `I`, unless an `input` schema
 * stands between them (it takes an `I` and gives a `HandlerInput`).
 */
export interface WorkflowDefinition<I = unknown, O = unknown, HandlerInput = I> {
  readonly name: string;
  readonly version: string;
  // biome-ignore lint/suspicious/noExplicitAny: the output schema takes what the handler returned, which the definition's types no longer name
  readonly options: Readonly<WorkflowOptions<HandlerInput> & { input?: StandardSchemaV1<I, HandlerInput>; output?: StandardSchemaV1<any, O> }>;
  /** The workflow's code, with the `output` schema applied to what it returns when there is one. */
  readonly handler: (ctx: WorkflowContext, input: HandlerInput) => Promise<O>;
}

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
 * unknown or not a string, when `concurrency` or `rateLimit` is malformed (a limit outside
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
    'input',
    'output',
  ]);
  checkConcurrency(`Workflow ${JSON.stringify(name)} concurrency`, options.concurrency);
  checkRateLimit(`Workflow ${JSON.stringify(name)} rateLimit`, options.rateLimit);
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
