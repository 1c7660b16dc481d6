import assert from 'node:assert/strict';
import { createEngine, isTerminalRunStatus, type Engine, type EngineOptions, type RunRecord, type AnyWorkflowDefinition } from '@cairn/core';
import { ManualClock } from '@cairn/core/testing';
import type { CaseEnv } from '../case.js';
import { countingStore, type CountingStore, type WorkflowStore } from '@cairn/core/backend';
import { stickyOption } from './sticky-knob.js';

/** Engine options a world fixes for every engine it starts (timings the cases rely on). */
export const WORLD_TIMINGS = { leaseMs: 30_000 } as const;
/** How often each engine's recovery loop runs, in clock time. */
export const WORLD_RECOVERY_MS = 10_000;

/** Options of one engine ("process") in a world. */
export interface WorldEngineOptions extends Partial<Omit<EngineOptions, 'store' | 'clock' | 'workflows'>> {
  /** Another store instance (a peer on the same namespace) instead of the world's store. */
  store?: WorkflowStore;
  /** Start no queue workers and no recovery loop (`engine.start({ workers: false })`). */
  noWorkers?: boolean;
}

/**
 * Engines over the store under test, on one `ManualClock`. Each engine stands for one process with
 * its own in-process queue and worker id; stopping one is how a case makes a process die.
 */
export interface EngineWorld {
  /** The store under test behind a counting proxy: every engine call goes through it. */
  store: CountingStore;
  /** The store under test itself, for reads that must not count. */
  raw: WorkflowStore;
  clock: ManualClock;
  /** The first engine, started. */
  engine: Engine;
  /** What the engines logged (warnings and errors), for failure messages. */
  log: string[];
  /** Starts another engine ("another process") on the same store and clock. */
  startEngine(workflows: readonly AnyWorkflowDefinition[], options?: WorldEngineOptions): Promise<Engine>;
  /** Waits until no store call is in flight for several event-loop turns (the engines are idle). */
  settle(): Promise<void>;
  /**
   * Lets the engines work and moves the clock timer by timer until the run is terminal; fails with
   * the run's status when `maxTimers` timers fired first or nothing is left to wait for.
   */
  runToEnd(runId: string, options?: { maxTimers?: number }): Promise<RunRecord>;
  /** Like `runToEnd`, until `predicate` holds. */
  runUntil(what: string, predicate: () => Promise<boolean>, options?: { maxTimers?: number }): Promise<void>;
}

/**
 * `count` store instances for `count` engines ("processes"): the case's store and peers on its
 * namespace where the backend has several processes, else the one store `count` times.
 */
export async function storesFor(env: CaseEnv, count: number): Promise<WorkflowStore[]> {
  if (env.harness.capabilities?.multiProcess === false) return Array.from({ length: count }, () => env.store);
  return [env.store, ...(await Promise.all(Array.from({ length: count - 1 }, () => env.openPeer())))];
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/** Builds a world and starts its first engine with `workflows`. Engines are stopped when the case ends. */
export async function engineWorld(env: CaseEnv, workflows: readonly AnyWorkflowDefinition[], options: WorldEngineOptions = {}): Promise<EngineWorld> {
  const clock = new ManualClock({ start: env.t0 });
  const store = countingStore(env.store);
  const counted: CountingStore[] = [store];
  const engineList: Engine[] = [];
  const log: string[] = [];
  let engines = 0;

  const startEngine = async (defs: readonly AnyWorkflowDefinition[], engineOptions: WorldEngineOptions = {}): Promise<Engine> => {
    const { store: other, noWorkers, timings, ...rest } = engineOptions;
    let target: CountingStore = store;
    if (other) {
      target = countingStore(other);
      counted.push(target);
    }
    engines += 1;
    const name = `engine-${engines}`;
    const engine = createEngine({
      store: target,
      clock,
      workflows: defs,
      workerId: name,
      recoveryIntervalMs: WORLD_RECOVERY_MS,
      logger: {
        warn: (_data, message) => void log.push(`${name} warn: ${message}`),
        error: (data, message) => void log.push(`${name} error: ${message} ${describe(data['err'])}`),
      },
      timings: { ...WORLD_TIMINGS, ...timings },
      // CAIRN_STICKY: kept executions on, off, or evicted at random (the fuzz runs all three).
      ...stickyOption(),
      ...rest,
    });
    await engine.start(noWorkers ? { workers: false } : {});
    engineList.push(engine);
    // A job stuck on user code (a gate a failed case never opened) must not hang the cleanup.
    env.defer(() => Promise.race([engine.stop(), new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref())]));
    return engine;
  };

  const settle = async () => {
    // Engine work hops between store calls, queue hand-offs and setImmediate turns; ten quiet
    // turns in a row with no store call in flight means every engine is waiting for the clock.
    let quiet = 0;
    while (quiet < 10) {
      // An engine replaying a long history runs turn after turn with no store call in between.
      if (counted.some((s) => s.inflight > 0) || engineList.some((e) => e.turnsInProgress > 0)) {
        quiet = 0;
        await pause();
      } else {
        quiet += 1;
        await turn();
      }
    }
  };

  const runUntil = async (what: string, predicate: () => Promise<boolean>, runOptions: { maxTimers?: number } = {}) => {
    const maxTimers = runOptions.maxTimers ?? 2_000;
    for (let fired = 0; fired <= maxTimers; fired += 1) {
      await settle();
      if (await predicate()) return;
      if (!(await clock.advanceToNextTimer())) {
        await settle();
        if (await predicate()) return;
        assert.fail(`${what}: nothing left to wait for (no timer pending). Engine log:\n${log.join('\n')}`);
      }
    }
    assert.fail(`${what}: still not reached after ${maxTimers} timers. Engine log:\n${log.join('\n')}`);
  };

  const runToEnd = async (runId: string, runOptions: { maxTimers?: number } = {}) => {
    let last: RunRecord | undefined;
    await runUntil(
      `run ${runId} to a terminal status`,
      async () => {
        last = await env.store.runs.get(runId);
        return last !== undefined && isTerminalRunStatus(last.status);
      },
      runOptions,
    ).catch((error: unknown) => {
      throw new Error(
        `${(error as Error).message}\nlast seen: ${last ? `${last.status} wakeAt=${last.wakeAt} lease=${JSON.stringify(last.lease)}` : 'missing'}`,
      );
    });
    await settle();
    return (await env.store.runs.get(runId)) as RunRecord;
  };

  const world: EngineWorld = {
    store,
    raw: env.store,
    clock,
    log,
    engine: undefined as unknown as Engine,
    startEngine,
    settle,
    runToEnd,
    runUntil,
  };
  world.engine = await startEngine(workflows, options);
  return world;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : error === undefined ? '' : String(error);
}
