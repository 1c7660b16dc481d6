import { CairnError } from '../errors/cairn-error.js';
import type { WorkflowStore } from './workflow-store.js';

// The one store-counting wrapper of the repository: the conformance suite's budget cases, the
// bench's round-trip attribution and core's engine tests all count through it. It lives in
// `@cairn/core/backend` because core's own tests need it and cannot depend on `@cairn/conformance`
// (which depends on core), while the conformance suite and the bench already depend on core; a
// backend author's tests count their store's calls the same way.

/** The store nouns whose methods are counted (`slots` when the store has it). */
const NOUNS = ['runs', 'steps', 'state', 'events', 'versions', 'history', 'schedules', 'slots', 'streams', 'pauses', 'bulk'] as const;

/** Nouns whose first argument is not a run id: a workflow name, a schedule name, a slot key or request. */
const NOT_BY_RUN: ReadonlySet<string> = new Set(['versions', 'schedules', 'slots', 'bulk']);
/** Methods of by-run nouns whose first argument is a workflow name, not a run id. */
const BY_WORKFLOW: ReadonlySet<string> = new Set(['pauses.pauseWorkflow', 'pauses.resumeWorkflow', 'pauses.getWorkflowPause', 'pauses.listWorkflowPauses']);

/** Methods that change data; everything else is a read. */
const WRITES: ReadonlySet<string> = new Set([
  'runs.create',
  'runs.claim',
  'runs.renew',
  'runs.transition',
  'runs.wake',
  'runs.promiseWake',
  'runs.keepPromise',
  'runs.requestCancel',
  'runs.delete',
  'runs.deleteMany',
  'runs.setTags',
  'steps.insert',
  'steps.transition',
  'state.set',
  'events.deliver',
  'streams.append',
  'versions.upsert',
  'versions.setStatus',
  'schedules.create',
  'schedules.update',
  'schedules.delete',
  'slots.acquire',
  'slots.renew',
  'slots.release',
  'pauses.pauseRun',
  'pauses.resumeRun',
  'pauses.pauseWorkflow',
  'pauses.resumeWorkflow',
  'bulk.create',
  'bulk.update',
  'bulk.delete',
]);

/** The optional store members a `CountingStore` can leave out (`CountingStoreOptions.without`). */
export const COUNTING_STORE_OPTIONAL_MEMBERS = ['slots', 'signals', 'doctor', 'streams', 'pauses', 'bulk'] as const;

/** An optional store member a `CountingStore` can leave out. */
export type CountingStoreOptionalMember = (typeof COUNTING_STORE_OPTIONAL_MEMBERS)[number];

/** One recorded store call. */
export interface StoreCall {
  /** `noun.method`, e.g. `steps.insert`. */
  readonly method: string;
  /** The run the call concerned, when its first argument is a run id. */
  readonly runId?: string;
  /** Whether the method changes data (`runs.claim`, `steps.insert`, ...); reads are false. */
  readonly write: boolean;
  /** The arguments as passed (with `cloneArgs`, a structured clone taken when the call started). */
  readonly args: readonly unknown[];
  /** Set when the call settled: whether it resolved with a value other than `undefined`. */
  returned?: boolean;
  /** Set when the call settled: its value, or the error it rejected with. */
  outcome?: { ok: true; value: unknown } | { ok: false; error: unknown };
}

/** Sends a call on to the wrapped store, with the arguments given (the caller's, or others). */
export type StoreCallForward = (...args: unknown[]) => Promise<unknown>;

/** How `countingStore` wraps. */
export interface CountingStoreOptions {
  /**
   * Optional members of the store the wrapper leaves out, so that an engine over it runs as over a
   * store without them (no signals: it polls; no slots: flow control is refused). Default: none.
   */
  readonly without?: readonly CountingStoreOptionalMember[];
  /**
   * Record a structured clone of each call's arguments in `StoreCall.args` instead of the
   * arguments themselves, for a test that reads them after the caller may have changed them.
   * Default false.
   */
  readonly cloneArgs?: boolean;
  /**
   * `false`: keep only the tally per method, not each call, for runs of millions of calls; `calls`
   * stays empty and the methods that need the calls (`count` with a run id, `countReturned`,
   * `writes`) throw. Default true.
   */
  readonly history?: boolean;
  /**
   * Runs in place of each forwarded call, after the call is recorded and counted in `inflight`:
   * it decides what the caller gets, usually `forward(...args)` with something around it (timing,
   * attribution, a replaced result). The call's `outcome` is what it returns or throws.
   */
  readonly around?: (call: StoreCall, forward: StoreCallForward, args: unknown[]) => Promise<unknown>;
}

/** A store that records every call it forwards: the budgets of tests and benchmarks read it. */
export interface CountingStore extends WorkflowStore {
  /** The wrapped store: calls made on it directly are not counted. */
  readonly inner: WorkflowStore;
  /** Every call since the last `reset`, in the order they started (empty with `history: false`). */
  readonly calls: readonly StoreCall[];
  /** Calls started and not yet settled (a test waits for 0 before moving a manual clock). */
  readonly inflight: number;
  /** How many times `noun.method` was called since the last `reset`, optionally only for `runId`. */
  count(method: string, runId?: string): number;
  /** Like `count`, counting only the calls that resolved with a value (a claim that took the lease). */
  countReturned(method: string, runId?: string): number;
  /** The calls that wrote, optionally only for `runId`. */
  writes(runId?: string): StoreCall[];
  /** Calls per `noun.method` since the last `reset` (methods never called are absent). */
  counts(): Record<string, number>;
  /** Forgets the calls and the tally so far; calls in flight still settle into `inflight`. */
  reset(): void;
}

/**
 * Wraps `store` so that every call of its nouns' methods (`runs.*`, `steps.*`, ..., `slots.*`) is
 * recorded and counted per `noun.method`, then forwarded unchanged (or through `options.around`).
 * Every other member of the store is the store's own, except those named in `options.without`,
 * which are absent. Without `around`, a method that returns or throws synchronously does so through
 * the wrapper too. Throws a `CairnError` with code `INVALID_INPUT` for a `without` entry that is no
 * optional store member.
 */
export function countingStore(store: WorkflowStore, options: CountingStoreOptions = {}): CountingStore {
  const { without = [], cloneArgs = false, history = true, around } = options;
  for (const member of without) {
    if (!(COUNTING_STORE_OPTIONAL_MEMBERS as readonly string[]).includes(member)) {
      throw new CairnError('INVALID_INPUT', `countingStore: 'without' takes ${COUNTING_STORE_OPTIONAL_MEMBERS.join(', ')}; got ${JSON.stringify(member)}`);
    }
  }
  const calls: StoreCall[] = [];
  const tally = new Map<string, number>();
  let inflight = 0;

  const settle = (call: StoreCall, outcome: NonNullable<StoreCall['outcome']>) => {
    call.outcome = outcome;
    call.returned = outcome.ok && outcome.value !== undefined;
  };
  const record = (noun: string, method: string, args: unknown[]): StoreCall => {
    const runId = !NOT_BY_RUN.has(noun) && !BY_WORKFLOW.has(method) && typeof args[0] === 'string' ? args[0] : undefined;
    const call: StoreCall = {
      method,
      write: WRITES.has(method),
      ...(runId === undefined ? {} : { runId }),
      args: cloneArgs ? structuredClone(args) : args,
    };
    if (history) calls.push(call);
    tally.set(method, (tally.get(method) ?? 0) + 1);
    return call;
  };
  const wrapNoun = (noun: (typeof NOUNS)[number]) => {
    const target = store[noun] as unknown as Record<string, unknown> | undefined;
    if (target === undefined) return undefined;
    return new Proxy(target, {
      get(obj, prop, receiver) {
        const value = Reflect.get(obj, prop, receiver);
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        const method = `${noun}.${prop}`;
        const forward: StoreCallForward = (...args) => (value as (...a: unknown[]) => Promise<unknown>).apply(obj, args);
        return (...args: unknown[]) => {
          const call = record(noun, method, args);
          inflight += 1;
          let result: unknown;
          try {
            result = around ? around(call, forward, args) : forward(...args);
          } catch (error) {
            inflight -= 1;
            settle(call, { ok: false, error });
            throw error;
          }
          if (!(result instanceof Promise)) {
            inflight -= 1;
            settle(call, { ok: true, value: result });
            return result;
          }
          result.then(
            (value) => settle(call, { ok: true, value }),
            (error: unknown) => settle(call, { ok: false, error }),
          );
          return result.finally(() => {
            inflight -= 1;
          });
        };
      },
    });
  };
  const needHistory = (what: string) => {
    if (!history) throw new CairnError('INVALID_INPUT', `countingStore: ${what} needs the calls, and this one was created with history: false`);
  };
  const matching = (method: string | undefined, runId: string | undefined, returned = false) =>
    calls.filter((c) => (method === undefined || c.method === method) && (runId === undefined || c.runId === runId) && (!returned || c.returned === true));

  // Slot calls are counted too: a test that waits for every call in flight (inflight 0) before
  // moving a manual clock must see them, or it moves the clock while a round trip is under way.
  const nouns = NOUNS.flatMap((noun) => {
    const proxy = without.includes(noun as CountingStoreOptionalMember) ? undefined : wrapNoun(noun);
    return proxy === undefined ? [] : [[noun, { value: proxy, enumerable: true }] as const];
  });
  const wrapped = Object.create(store) as CountingStore;
  Object.defineProperties(wrapped, {
    ...Object.fromEntries(without.map((member) => [member, { value: undefined }])),
    name: { value: store.name, enumerable: true },
    capabilities: { value: store.capabilities, enumerable: true },
    ...Object.fromEntries(nouns),
    close: { value: () => store.close(), enumerable: true },
    inner: { value: store },
    calls: { get: () => calls },
    inflight: { get: () => inflight },
    count: {
      value: (method: string, runId?: string) => {
        if (runId === undefined) return tally.get(method) ?? 0;
        needHistory('count(method, runId)');
        return matching(method, runId).length;
      },
    },
    countReturned: {
      value: (method: string, runId?: string) => {
        needHistory('countReturned');
        return matching(method, runId, true).length;
      },
    },
    writes: {
      value: (runId?: string) => {
        needHistory('writes');
        return matching(undefined, runId).filter((c) => c.write);
      },
    },
    counts: { value: () => Object.fromEntries(tally) },
    reset: {
      value: () => {
        calls.splice(0, calls.length);
        tally.clear();
      },
    },
  });
  return wrapped;
}
