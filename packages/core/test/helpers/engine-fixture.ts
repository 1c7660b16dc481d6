// Shared scaffolding of the engine tests: an engine over a memory store seen through the counting
// store of `@cairn/core/backend`, a ManualClock, a scripted fault injector, a quiet logger, and polling helpers bounded by
// event-loop turns (never by elapsed time).
import assert from 'node:assert/strict';
import { type Engine, type EngineOptions, type RunRecord, type RunStatus, type StepRecord, createEngine, createMemoryStore } from '@cairn/core';
import { type CountingStore, countingStore as countCalls, type WorkflowStore } from '@cairn/core/backend';
import { ManualClock, type ScriptedFaults, createFaults } from '@cairn/core/testing';

/**
 * The counting store of `@cairn/core/backend` as the engine tests use it: over a memory store by
 * default, arguments cloned (tests read them after the engine moved on), and `intercept` to replace
 * a method's result.
 */
export interface EngineCounter extends CountingStore {
  /** Replace a method (`noun.method`) with `fn(original, ...args)`; `undefined` restores it. The call is counted either way. */
  // biome-ignore lint/suspicious/noExplicitAny: each interceptor names the argument types of the one method it replaces
  intercept(name: string, fn: ((original: (...args: any[]) => Promise<unknown>, ...args: any[]) => Promise<unknown>) | undefined): void;
}

export function countingStore(inner: WorkflowStore = createMemoryStore()): EngineCounter {
  // biome-ignore lint/suspicious/noExplicitAny: as in intercept(): the argument types are those of the replaced method
  const intercepts = new Map<string, (original: (...args: any[]) => Promise<unknown>, ...args: any[]) => Promise<unknown>>();
  const counter = countCalls(inner, {
    // These tests were written against an engine that sees no signals, slots or doctor on the
    // store (the flow-control and dispatch tests build their own engines); keep it so.
    without: ['signals', 'slots', 'doctor'],
    cloneArgs: true,
    around: (call, forward, args) => {
      const intercept = intercepts.get(call.method);
      return intercept ? intercept(forward, ...args) : forward(...args);
    },
  });
  return Object.assign(counter, {
    intercept: (name: string, fn: Parameters<EngineCounter['intercept']>[1]) => void (fn ? intercepts.set(name, fn) : intercepts.delete(name)),
  });
}

/** A log line the engine emitted. */
export interface LogLine {
  level: 'warn' | 'error';
  message: string;
  data: Record<string, unknown> | undefined;
}

export interface Fixture {
  engine: Engine;
  clock: ManualClock;
  /** The store the engine uses (counting proxy). */
  store: WorkflowStore;
  counter: EngineCounter;
  /** The memory store underneath (reads through it are not counted). */
  inner: WorkflowStore;
  faults: ScriptedFaults;
  logs: LogLine[];
}

export interface FixtureOptions extends Partial<Omit<EngineOptions, 'store' | 'workflows' | 'clock' | 'faults' | 'logger'>> {
  workflows: EngineOptions['workflows'];
  clock?: ManualClock;
  /** Reuse a counting store (several engines over one store). */
  counter?: EngineCounter;
  faults?: ScriptedFaults;
  /** Start workers (default true); `false` registers versions only; `'no'` does not call start(). */
  start?: boolean | 'no';
}

/**
 * An engine over a counting memory store with a ManualClock. The recovery loop is effectively off
 * (tests call `engine.recover()` themselves) unless `recoveryIntervalMs` is given.
 */
export async function createFixture(options: FixtureOptions): Promise<Fixture> {
  const { workflows, clock = new ManualClock(), counter = countingStore(), faults = createFaults(), start = true, ...rest } = options;
  const logs: LogLine[] = [];
  const engine = createEngine({
    recoveryIntervalMs: 1e12,
    ...rest,
    store: counter,
    workflows,
    clock,
    faults,
    logger: {
      warn: (data, message) => void logs.push({ level: 'warn', message, data }),
      error: (data, message) => void logs.push({ level: 'error', message, data }),
    },
  });
  // engine.stop() waits for in-flight jobs; one stuck on a ManualClock timer (an in-place retry
  // wait) or on a body that never settles would hang the test after a failed assertion. Bound it.
  const stop = engine.stop.bind(engine);
  (engine as { stop: (options?: { graceMs?: number }) => Promise<void> }).stop = async (stopOptions) => {
    let done = false;
    const stopped = stop(stopOptions);
    stopped.then(
      () => void (done = true),
      () => void (done = true),
    );
    for (let i = 0; i < 5000 && !done; i++) await turn();
    if (!done) console.error(`[engine-fixture] engine.stop() of ${engine.workerId} did not finish: a job is still in flight`);
    else await stopped;
  };
  if (start !== 'no') await engine.start({ workers: start });
  return { engine, clock, store: counter, counter, inner: counter.inner, faults, logs };
}

/** One macrotask turn: every pending microtask (and the ones they queue) runs first. */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await turn();
}

/**
 * Waits turn by turn until `done()` holds. Bounded by event-loop turns, not by time, so a bug fails
 * the test instead of hanging it.
 */
export async function until(done: () => boolean | Promise<boolean>, what = 'condition', maxTurns = 20_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (await done()) return;
    await turn();
  }
  assert.fail(`${what}: not reached after ${maxTurns} event-loop turns`);
}

/** Waits until the run has one of `statuses` and returns it. */
export async function waitForStatus(store: WorkflowStore, runId: string, statuses: RunStatus | RunStatus[], maxTurns?: number): Promise<RunRecord> {
  const wanted = [statuses].flat();
  let run: RunRecord | undefined;
  await until(
    async () => {
      run = await store.runs.get(runId);
      return run !== undefined && wanted.includes(run.status);
    },
    `run ${runId} to be ${wanted.join('|')} (last seen ${run?.status})`,
    maxTurns,
  );
  return run as RunRecord;
}

/**
 * Waits until the run is `waiting` and nothing happens for a few turns (no executing local pass).
 * Returns the run.
 */
export async function waitForIdle(store: WorkflowStore, runId: string, maxTurns?: number): Promise<RunRecord> {
  let last = '';
  let stable = 0;
  let run: RunRecord | undefined;
  await until(
    async () => {
      run = await store.runs.get(runId);
      const steps = await store.steps.load(runId);
      const sig = JSON.stringify([run?.status, run?.updatedAt, run?.fence, steps.map((s) => [s.key, s.status, s.attempt])]);
      stable = sig === last ? stable + 1 : 0;
      last = sig;
      return stable >= 5 && run !== undefined && run.status !== 'running' && run.status !== 'pending';
    },
    `run ${runId} to settle`,
    maxTurns,
  );
  return run as RunRecord;
}

/** Waits until the step exists with one of `statuses`. */
export async function waitForStep(
  store: WorkflowStore,
  runId: string,
  key: string,
  statuses: StepRecord['status'] | StepRecord['status'][],
): Promise<StepRecord> {
  const wanted = [statuses].flat();
  let step: StepRecord | undefined;
  await until(
    async () => {
      step = (await store.steps.load(runId)).find((s) => s.key === key);
      return step !== undefined && wanted.includes(step.status);
    },
    `step ${key} of ${runId} to be ${wanted.join('|')} (last seen ${step?.status})`,
  );
  return step as StepRecord;
}

/** Expects `promise` to reject with a CairnError of `code`; returns the error. */
export async function rejectsWithCode(promise: Promise<unknown> | (() => unknown), code: string): Promise<Error & { code: string; data?: unknown }> {
  let error: unknown;
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (e) {
    error = e;
  }
  assert.ok(error !== undefined, `expected a rejection with ${code}, got a value`);
  assert.equal((error as { name?: string }).name, 'CairnError', `expected a CairnError, got ${String(error)}`);
  assert.equal((error as { code?: string }).code, code, `expected ${code}, got ${(error as Error).message}`);
  return error as Error & { code: string };
}

/** The chain of error codes from an error down its causes. */
export function codeChain(error: unknown): string[] {
  const out: string[] = [];
  let e = error as { code?: unknown; cause?: unknown } | undefined;
  for (let i = 0; e && i < 10; i++) {
    out.push(typeof e.code === 'string' ? e.code : `(${(e as { name?: string }).name ?? typeof e})`);
    e = e.cause as typeof e;
  }
  return out;
}

/** A promise with its resolve function. */
export interface Gate<T = void> {
  promise: Promise<T>;
  open(value: T): void;
}

export function gate<T = void>(): Gate<T> {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * Waits until nothing changes for `stableTurns` event-loop turns: the run, its steps and the number
 * of store calls made through `counter`. Unlike `waitForIdle` it accepts any status (a crashed
 * execution leaves its run `running` under a lease nobody renews).
 */
export async function waitForQuiet(counter: CountingStore, runId: string, stableTurns = 10): Promise<RunRecord | undefined> {
  let last = '';
  let stable = 0;
  let run: RunRecord | undefined;
  await until(async () => {
    run = await counter.inner.runs.get(runId);
    const steps = await counter.inner.steps.load(runId);
    const sig = JSON.stringify([run, steps, counter.calls.length]);
    stable = sig === last ? stable + 1 : 0;
    last = sig;
    return stable >= stableTurns;
  }, `run ${runId} to go quiet`);
  return run;
}
