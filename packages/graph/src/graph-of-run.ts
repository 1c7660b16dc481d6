// A run's graph, read back from its history: the marker step every graph run records first holds
// the graph it ran, so tools (approve, the CLI, the dashboard) need no code to know it.
import type { Json, StepRecord } from '@cairn/core';
import type { GraphMarker } from './run-graph.js';

const MARKER = /^graph:[0-9a-f]{16}$/;

/** The marker a graph run recorded, or `undefined` (not a graph run, or not started yet). */
export function graphMarkerOf(steps: readonly StepRecord[]): GraphMarker | undefined {
  const step = steps.find((s) => s.kind === 'task' && MARKER.test(s.name) && s.status === 'succeeded');
  const output = step?.output as { graph?: Json; hash?: Json } | undefined;
  if (output === undefined || typeof output !== 'object' || output === null || typeof output.graph !== 'object') return undefined;
  return output as unknown as GraphMarker;
}

/** What a node's steps say about it in one run. */
export type NodeState = 'not-run' | 'running' | 'waiting' | 'waiting-approval' | 'succeeded' | 'failed';

/**
 * The state of each node of a graph run, from its steps: a node's steps are named after it (`id`,
 * or `id[i]` for the items of a forEach). A node none of whose steps exist has not run (yet, or
 * ever: it was skipped).
 */
export function nodeStates(marker: GraphMarker, steps: readonly StepRecord[]): Record<string, NodeState> {
  const states: Record<string, NodeState> = {};
  for (const id of Object.keys(marker.graph.nodes)) {
    const own = steps.filter((s) => s.name === id || (s.name.startsWith(`${id}[`) && /^\[\d+\]$/.test(s.name.slice(id.length))));
    const isGate = 'approval' in (marker.graph.nodes[id] as object);
    let state: NodeState = 'not-run';
    if (own.some((s) => s.status === 'failed')) state = 'failed';
    else if (own.some((s) => s.status === 'waiting')) state = isGate ? 'waiting-approval' : 'waiting';
    else if (own.some((s) => s.status !== 'succeeded')) state = 'running';
    else if (own.length > 0) state = 'succeeded';
    states[id] = state;
  }
  return states;
}
