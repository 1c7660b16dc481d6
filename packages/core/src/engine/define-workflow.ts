import { CairnError } from '../errors/cairn-error.js';
import type { WorkflowContext } from './workflow-context.js';

/** Options of `defineWorkflow`. */
export interface WorkflowOptions {
  /** The version new runs start on (default `'1'`). Runs replay on the version they started with. */
  version?: string;
  /** With the `shared-groups` strategy: the tier of this workflow's job group. */
  tier?: string;
  /** Free-form description stored with the version. */
  description?: string;
}

/** A registered workflow: name, version and handler. */
export interface WorkflowDefinition<I = unknown, O = unknown> {
  readonly name: string;
  readonly version: string;
  readonly options: Readonly<WorkflowOptions>;
  readonly handler: (ctx: WorkflowContext, input: I) => Promise<O>;
}

/**
 * Defines a workflow. The handler is plain async code; use `ctx` for everything that must survive a
 * crash. Throws `INVALID_INPUT` for an empty name or version.
 */
export function defineWorkflow<I = unknown, O = unknown>(
  name: string,
  handler: (ctx: WorkflowContext, input: I) => Promise<O>,
  options: WorkflowOptions = {},
): WorkflowDefinition<I, O> {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
    throw new CairnError('INVALID_INPUT', `Workflow name must be a non-empty string of at most 200 characters`);
  }
  const version = options.version ?? '1';
  if (typeof version !== 'string' || version.length === 0 || version.length > 100) {
    throw new CairnError('INVALID_INPUT', `Workflow version must be a non-empty string of at most 100 characters`);
  }
  if (typeof handler !== 'function') throw new CairnError('INVALID_INPUT', `Workflow ${name}: handler must be a function`);
  return Object.freeze({ name, version, options: Object.freeze({ ...options }), handler });
}
