// The options of `startRun` and `defineWorkflow` that decide when a start becomes a run (types
// only: `workflow-options.ts` refers to them, and must not reach the engine through them).
import type { Duration } from '../define/duration.js';

/**
 * `startRun(…, { singleton })`, or a workflow's default (`defineWorkflow(…, { singleton })`): at
 * most one run of a key has started and not ended at any time, across every engine on the store
 * (docs/semantics.md, "Starting runs").
 */
export interface SingletonOption<I = unknown> {
  /**
   * The key (a workflow default may compute it from the input, deterministically). A non-empty,
   * well-formed string without NUL of at most 256 characters; `INVALID_INPUT` otherwise, with
   * nothing written.
   */
  key: string | ((input: I) => string);
  /**
   * `'skip'`: when a run of the key has not ended, the start returns that run's handle
   * (`created: false`) and creates nothing. `'queue'`: the start creates a run that starts only
   * when every run of the key started before it has ended, first come first served.
   */
  mode: 'skip' | 'queue';
}

/**
 * `startRun(…, { debounce })`, or a workflow's default: starts with one key within `period` of
 * each other make one run, which starts `period` after the last of them with the last one's input
 * (docs/semantics.md, "Starting runs").
 */
export interface DebounceOption<I = unknown> {
  /** The key (a workflow default may compute it from the input): as `SingletonOption.key`. */
  key: string | ((input: I) => string);
  /** How long after the last start the run starts: a `Duration` of at least 1 ms. */
  period: Duration;
}

/**
 * `startRun(…, { batch })`, or a workflow's default: starts with one key are collected into one
 * run whose input is the list of their inputs in arrival order, started when `maxSize` inputs
 * arrived or `maxWait` after the first, whichever comes first.
 */
export interface BatchOption<I = unknown> {
  /** The key (default: one batch line for the whole workflow); as `SingletonOption.key`. */
  key?: string | ((input: I) => string);
  /** The most inputs in one run: an integer from 1 to 1000 (`MAX_BATCH_SIZE`). */
  maxSize: number;
  /** How long after the first input the run starts at the latest: a `Duration` of at least 1 ms. */
  maxWait: Duration;
}

/** The largest `batch.maxSize`. */
export const MAX_BATCH_SIZE = 1000;
