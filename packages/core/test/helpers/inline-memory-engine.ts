import { type AnyWorkflowDefinition, createEngine, createMemoryStore, type Engine, type EngineOptions } from '@cairn/core';

/**
 * An engine over a fresh memory store that runs `startRun`s inline, with no recovery pass and a
 * one-hour lease: no timer of its own fires while a test measures what its runs keep or allocate.
 */
export function inlineMemoryEngine(workflows: AnyWorkflowDefinition[], options: Pick<EngineOptions, 'stickyExecutions'> = {}): Engine {
  return createEngine({
    ...options,
    store: createMemoryStore(),
    workflows,
    recoveryIntervalMs: 1e12,
    timings: { leaseMs: 3_600_000 },
    startMode: 'inline',
  });
}
