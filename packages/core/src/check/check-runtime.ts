// The runtime a check's replay runs on: the engine's own replay (`Execution` in check mode) given a
// store that can only hand over what the run's history holds, a queue that refuses every job, and
// no faults, no lifecycle subscribers, no workers. Check mode already never writes or runs a body;
// a slip is a STORE_ERROR, which ends the replay as `unreadable` with the reason (never a verdict);
// this makes a slip loud instead of harmful (DESIGN §9: one replay, a runtime that reads only).
import { WorkflowPauseCache } from '../engine/flow/workflow-pause-cache.js';
import { systemClock } from '../clock/system-clock.js';
import { CairnError } from '../errors/cairn-error.js';
import type { Json } from '../model/json.js';
import { Lifecycle } from '../observe/lifecycle.js';
import type { Queue } from '../queue/queue.js';
import type { WorkflowStore } from '../store/workflow-store.js';
import { DEFAULT_TIMINGS } from '../engine/check-engine-options.js';
import type { EngineRuntime } from '../engine/engine-runtime.js';
import { NO_FAULTS } from '../engine/fault-point.js';
import type { WorkflowRegistry } from '../engine/workflow-registry.js';
import type { RuntimeLogger } from '../logging/runtime-logger.js';

function refused(what: string): never {
  throw new CairnError('STORE_ERROR', `A check's replay tried to ${what}; it only reads the run's history`);
}

const quiet = (): void => {};
const SILENT: RuntimeLogger = { debug: quiet, info: quiet, warn: quiet, error: quiet, enabled: () => false, payloads: false };

/**
 * A read-only store over one run's state: `state.get` answers from `state` (a value, or a read), every other member
 * throws (the replay in check mode reads nothing else).
 */
function historyStore(state: Record<string, Json> | (() => Promise<Record<string, Json>>)): WorkflowStore {
  const deny = (noun: string) => new Proxy({}, { get: (_t, method) => () => refused(`call ${noun}.${String(method)}`) });
  const stateStore = new Proxy(
    {},
    {
      get: (_t, method) =>
        method === 'get' ? async () => (typeof state === 'function' ? state() : { ...state }) : () => refused(`call state.${String(method)}`),
    },
  );
  return new Proxy({ name: 'check' } as unknown as WorkflowStore, {
    get: (target, noun) => {
      if (noun === 'name') return (target as { name: string }).name;
      if (noun === 'state') return stateStore;
      if (noun === 'capabilities') return {};
      if (typeof noun !== 'string' || noun === 'then') return undefined;
      return deny(noun);
    },
  });
}

const NO_QUEUE = new Proxy({} as Queue, {
  get: (_t, member) => (member === 'then' ? undefined : () => refused(`use the queue (${String(member)})`)),
});

/** A runtime for replaying one run's history against `registry`'s code with no side effect. */
export function checkRuntime(
  registry: WorkflowRegistry,
  state: Record<string, Json> | (() => Promise<Record<string, Json>>),
  maxPayloadBytes: number,
): EngineRuntime {
  const shutdown = new AbortController();
  const store = historyStore(state);
  return {
    store,
    queue: NO_QUEUE,
    clock: systemClock,
    workerId: 'cairn-check',
    timings: DEFAULT_TIMINGS,
    maxPayloadBytes,
    faults: NO_FAULTS,
    registry,
    logger: SILENT,
    lifecycle: new Lifecycle(SILENT, systemClock, 'cairn-check', 'check'),
    executing: new Map(),
    turnsInProgress: { count: 0 },
    sticky: undefined,
    rerun: new Set(),
    // Never read: a check claims nothing.
    workflowPauses: new WorkflowPauseCache(store, systemClock),
    shutdown: () => shutdown.signal,
    dispatchRun: async () => refused('dispatch a run'),
    dispatchStep: async () => refused('dispatch a step'),
    notifyFinished: () => {},
    executionLeft: () => {},
  };
}
