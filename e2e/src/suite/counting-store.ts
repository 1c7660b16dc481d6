import type { WorkflowStore } from '@cairn/core';

/** The store nouns whose methods a `CountingStore` counts (`slots` when the store has it). */
const NOUNS = ['runs', 'steps', 'state', 'events', 'versions', 'history', 'schedules', 'slots'] as const;

/** Methods that change data; everything else is a read. */
const WRITES: ReadonlySet<string> = new Set([
  'runs.create',
  'runs.claim',
  'runs.renew',
  'runs.transition',
  'runs.wake',
  'runs.requestCancel',
  'runs.delete',
  'steps.insert',
  'steps.transition',
  'state.set',
  'events.deliver',
  'versions.upsert',
  'versions.setStatus',
  'schedules.create',
  'schedules.update',
  'schedules.delete',
  'slots.acquire',
  'slots.renew',
  'slots.release',
]);

/** One recorded store call. */
export interface StoreCall {
  /** `noun.method`, e.g. `steps.insert`. */
  method: string;
  /** The run the call concerned, when its first argument is a run id. */
  runId?: string;
  write: boolean;
  /** Set when the call settled: whether it resolved with a value other than `undefined`. */
  returned?: boolean;
}

/** A store that records every call it forwards, for round-trip budgets. */
export interface CountingStore extends WorkflowStore {
  /** Every call so far, in order. */
  readonly calls: readonly StoreCall[];
  /** Calls started and not yet settled (the engine fixture waits for 0 before moving the clock). */
  readonly inflight: number;
  /** How many times `noun.method` was called (optionally only for `runId`). */
  count(method: string, runId?: string): number;
  /** Like `count`, only the calls that resolved with a value (a claim that took the lease). */
  countReturned(method: string, runId?: string): number;
  /** Calls that wrote, optionally only for `runId`. */
  writes(runId?: string): StoreCall[];
  /** Calls per `noun.method`. */
  counts(): Record<string, number>;
  /** Forgets the calls so far. */
  reset(): void;
}

/**
 * Wraps `store` so every call is counted per `noun.method` and forwarded unchanged. The engine
 * cases run on this wrapper; the budget cases read its counts.
 */
export function countingStore(store: WorkflowStore): CountingStore {
  const calls: StoreCall[] = [];
  let inflight = 0;
  const wrapNoun = (noun: (typeof NOUNS)[number]) => {
    const target = store[noun] as unknown as Record<string, unknown> | undefined;
    if (target === undefined) return undefined;
    return new Proxy(target, {
      get(obj, prop, receiver) {
        const value = Reflect.get(obj, prop, receiver);
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        const method = `${noun}.${prop}`;
        return (...args: unknown[]) => {
          const call: StoreCall = { method, write: WRITES.has(method) };
          // versions.* take a workflow name first, schedules.* a schedule name, slots.* a slot key or request, not a run id.
          if (noun !== 'versions' && noun !== 'schedules' && noun !== 'slots' && typeof args[0] === 'string') call.runId = args[0];
          calls.push(call);
          inflight += 1;
          let result: unknown;
          try {
            result = (value as (...a: unknown[]) => unknown).apply(obj, args);
          } catch (error) {
            inflight -= 1;
            throw error;
          }
          if (!(result instanceof Promise)) {
            inflight -= 1;
            return result;
          }
          result.then(
            (value) => void (call.returned = value !== undefined),
            () => void (call.returned = false),
          );
          return result.finally(() => {
            inflight -= 1;
          });
        };
      },
    });
  };
  const wrapped = Object.create(store) as CountingStore;
  // Slot calls are counted too: the engine fixture's settle() waits for every call in flight, and a
  // slot call that it did not see let it move the clock while a store round trip was under way.
  const nouns = Object.fromEntries(
    NOUNS.flatMap((noun) => {
      const proxy = wrapNoun(noun);
      return proxy === undefined ? [] : [[noun, proxy]];
    }),
  );
  Object.defineProperties(wrapped, {
    name: { value: store.name, enumerable: true },
    capabilities: { value: store.capabilities, enumerable: true },
    ...Object.fromEntries(Object.entries(nouns).map(([k, v]) => [k, { value: v, enumerable: true }])),
    close: { value: () => store.close(), enumerable: true },
    calls: { get: () => calls },
    inflight: { get: () => inflight },
    count: {
      value: (method: string, runId?: string) => calls.filter((c) => c.method === method && (runId === undefined || c.runId === runId)).length,
    },
    countReturned: {
      value: (method: string, runId?: string) =>
        calls.filter((c) => c.method === method && c.returned === true && (runId === undefined || c.runId === runId)).length,
    },
    writes: { value: (runId?: string) => calls.filter((c) => c.write && (runId === undefined || c.runId === runId)) },
    counts: {
      value: () => {
        const out: Record<string, number> = {};
        for (const c of calls) out[c.method] = (out[c.method] ?? 0) + 1;
        return out;
      },
    },
    reset: { value: () => void calls.splice(0, calls.length) },
  });
  return wrapped;
}
