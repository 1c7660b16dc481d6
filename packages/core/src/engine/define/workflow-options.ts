// The options of `defineWorkflow`, apart from the definition and its context types, which refer to
// them (a file of its own keeps the types of a workflow free of import cycles).
import type { StandardSchemaV1 } from '../../validation/standard-schema.js';
import type { Duration } from './duration.js';
import type { ConcurrencyLimit, RateLimit } from '../flow/flow-options.js';
import type { BatchOption, DebounceOption, SingletonOption } from '../flow/start-options.js';

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
   * The default `singleton` of this workflow's starts (`startRun`'s own overrides it): at most one
   * run of a key has started and not ended at a time. The key may be a deterministic function of
   * the input. Needs a store with `slots`. See docs/semantics.md, "Starting runs".
   */
  singleton?: SingletonOption<I>;
  /**
   * The default `debounce` of this workflow's starts (`startRun`'s own singleton, debounce or
   * batch overrides it): starts of one key within `period` of each other make one run, which
   * starts `period` after the last with its input. See docs/semantics.md, "Starting runs".
   */
  debounce?: DebounceOption<I>;
  /**
   * The default `batch` of this workflow's starts (overridden as `debounce`): starts of one key are
   * collected into one run whose input is the list of their inputs. The handler then receives an
   * array. See docs/semantics.md, "Starting runs".
   */
  batch?: BatchOption<I>;
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
