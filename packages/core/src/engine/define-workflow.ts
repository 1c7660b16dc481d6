import { CairnError } from '../errors/cairn-error.js';
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
}

/** A registered workflow: name, version and handler. */
export interface WorkflowDefinition<I = unknown, O = unknown> {
  readonly name: string;
  readonly version: string;
  readonly options: Readonly<WorkflowOptions<I>>;
  readonly handler: (ctx: WorkflowContext, input: I) => Promise<O>;
}

/**
 * Defines a workflow. The handler is plain async code; use `ctx` for everything that must survive a
 * crash. Throws `INVALID_INPUT` when the name (at most 200 characters) or version (at most 100) is
 * not an identifier (see `checkIdentifier`: non-empty, well-formed UTF-16, no NUL), when an option
 * is unknown or not a string, when `concurrency` or `rateLimit` is malformed (a limit outside
 * 1..10,000, a period under 1 ms, a key that is not a function), or when the handler is not a
 * function.
 */
export function defineWorkflow<I = unknown, O = unknown>(
  name: string,
  handler: (ctx: WorkflowContext, input: I) => Promise<O>,
  options: WorkflowOptions<I> = {},
): WorkflowDefinition<I, O> {
  checkIdentifier('Workflow name', name, IDENTIFIER_LIMITS.workflowName);
  checkOptions(`Workflow ${JSON.stringify(name)} options`, options, ['version', 'tier', 'description', 'deadline', 'concurrency', 'rateLimit']);
  checkConcurrency(`Workflow ${JSON.stringify(name)} concurrency`, options.concurrency);
  checkRateLimit(`Workflow ${JSON.stringify(name)} rateLimit`, options.rateLimit);
  if (options.deadline !== undefined) toMilliseconds(options.deadline, `Workflow ${JSON.stringify(name)} deadline`);
  const version = checkIdentifier(`Workflow ${JSON.stringify(name)} version`, options.version === undefined ? '1' : options.version, IDENTIFIER_LIMITS.version);
  if (options.tier !== undefined) checkIdentifier(`Workflow ${JSON.stringify(name)} tier`, options.tier, IDENTIFIER_LIMITS.workflowName);
  if (options.description !== undefined && typeof options.description !== 'string') {
    throw new CairnError('INVALID_INPUT', `Workflow ${JSON.stringify(name)}: description must be a string`);
  }
  if (typeof handler !== 'function') throw new CairnError('INVALID_INPUT', `Workflow ${name}: handler must be a function`);
  return Object.freeze({ name, version, options: Object.freeze({ ...options }), handler });
}
