import type { NewRun, RunRecord } from '../../model/run.js';
import { invalidInput } from '../check-input.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { checkSingleton, startSingleton } from './singleton.js';
import type { BatchOption, DebounceOption, SingletonOption } from './start-options.js';
import { checkBatch, checkDebounce, startWindowed } from './start-windows.js';

/** How a start is gated: at most one of `singleton`, `debounce` and `batch`. */
export type StartGate = { singleton: SingletonOption } | { debounce: DebounceOption } | { batch: BatchOption };

const GATES = ['singleton', 'debounce', 'batch'] as const;

/**
 * Checks the `singleton`, `debounce` and `batch` options of `startRun` or `defineWorkflow` (`what`)
 * and returns the one given, if any. Two at once are refused (`INVALID_INPUT`): each keeps its
 * line in the run's idempotency key. A workflow default may compute its key from the input.
 */
export function checkStartGate(what: string, options: Partial<Record<(typeof GATES)[number], unknown>>, keyMayBeFunction: boolean): StartGate | undefined {
  checkSingleton(`${what} singleton`, options.singleton, keyMayBeFunction);
  checkDebounce(`${what} debounce`, options.debounce, keyMayBeFunction);
  checkBatch(`${what} batch`, options.batch, keyMayBeFunction);
  const given = GATES.filter((gate) => options[gate] !== undefined);
  if (given.length > 1) throw invalidInput(`${what} ${given.join(' and ')}`, 'cannot be combined: give at most one of singleton, debounce and batch', given);
  return startGateOf(options as Partial<Record<(typeof GATES)[number], never>>);
}

/** The gate of checked options (a workflow's defaults), if any. */
export function startGateOf(options: { singleton?: SingletonOption; debounce?: DebounceOption; batch?: BatchOption }): StartGate | undefined {
  if (options.singleton !== undefined) return { singleton: options.singleton };
  if (options.debounce !== undefined) return { debounce: options.debounce };
  if (options.batch !== undefined) return { batch: options.batch };
  return undefined;
}

/** Starts `run` through its gate (see `startSingleton`, `startWindowed`). */
export function startGated(rt: EngineRuntime, run: NewRun, gate: StartGate, now: number): Promise<{ run: RunRecord; created: boolean }> {
  if ('singleton' in gate) return startSingleton(rt, run, gate.singleton, now);
  return startWindowed(rt, run, gate, now);
}
