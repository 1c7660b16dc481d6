import type { StoreContext } from './context.js';

/**
 * The tables that hold a run's artefacts, each keyed by `run_id`: what deleting a run empties
 * before it removes the run row (`runs.delete`, `runs.deleteMany`). One list, so a table added for
 * a new kind of record is deleted by both.
 */
export function runArtefactTables(t: StoreContext['t']) {
  return [t.attempts, t.steps, t.state, t.events, t.stream_entries, t.run_tags];
}
