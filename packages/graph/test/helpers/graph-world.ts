// An engine on the memory store and a manual clock, driven to a run's end timer by timer.
import { createEngine, createMemoryStore, type AnyWorkflowDefinition, type Engine, isTerminalRunStatus, type RunRecord } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { ManualClock } from '@cairn/core/testing';

export interface GraphWorld {
  engine: Engine;
  store: WorkflowStore;
  clock: ManualClock;
  /** Lets the engine work until the run is terminal, or `predicate` holds, firing timers as it goes. */
  until(runId: string, predicate?: (run: RunRecord) => boolean): Promise<RunRecord>;
  stop(): Promise<void>;
}

const idle = async () => {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

export async function graphWorld(workflows: readonly AnyWorkflowDefinition[]): Promise<GraphWorld> {
  const store = createMemoryStore();
  const clock = new ManualClock();
  const engine = createEngine({ store, clock, workflows });
  await engine.start();
  const until = async (runId: string, predicate: (run: RunRecord) => boolean = (run) => isTerminalRunStatus(run.status)) => {
    for (let i = 0; i < 2_000; i += 1) {
      await idle();
      const run = await store.runs.get(runId);
      if (run && predicate(run)) return run;
      if (!(await clock.advanceToNextTimer())) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    throw new Error(`run ${runId} did not get there: ${JSON.stringify(await store.runs.get(runId))}`);
  };
  return { engine, store, clock, until, stop: () => engine.stop() };
}
