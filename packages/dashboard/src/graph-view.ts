import type { StepRecord } from '@cairn/core';
import { type GraphLayout, graphMarkerOf, historyGraph, layoutGraph, type NodeState, nodeStates, type PayloadSchema } from '@cairn/graph';

/** An approval gate the run waits at, with what an answer needs. */
export interface PendingApproval {
  node: string;
  approvers?: readonly string[];
  schema?: PayloadSchema;
  /** When the gate expires (epoch ms), if it does. */
  expiresAt?: number;
}

/** A graph run's drawing (`/api/runs/:id`'s `graph`): the layout, each node's state, and the gates waiting for an answer. */
export interface GraphView {
  /** The graph's hash; absent for a code run, drawn from its history. */
  hash?: string;
  /** `graph`: a graph run's own graph; `history`: a code run's recorded calls in call order. */
  source: 'graph' | 'history';
  layout: GraphLayout;
  states: Record<string, NodeState>;
  pending: PendingApproval[];
}

/**
 * The graph view of a run from its steps: a graph run's graph with each node's state, or for a code
 * run (no graph marker) a drawing of what it did, its recorded calls in call order (`historyGraph`);
 * `undefined` for a run that has recorded nothing yet.
 */
export function graphView(steps: readonly StepRecord[]): GraphView | undefined {
  const marker = graphMarkerOf(steps);
  if (marker === undefined) {
    if (steps.length === 0) return undefined;
    const drawn = historyGraph(steps);
    return { source: 'history', layout: layoutGraph(drawn.graph), states: { ...drawn.states }, pending: [] };
  }
  const states = nodeStates(marker, steps);
  const pending: PendingApproval[] = [];
  for (const [node, state] of Object.entries(states)) {
    if (state !== 'waiting-approval') continue;
    const gate = (marker.graph.nodes[node] as { approval: { approvers?: readonly string[]; schema?: PayloadSchema } }).approval;
    const wait = steps.find((s) => s.name === node && s.kind === 'select');
    pending.push({
      node,
      ...(gate.approvers === undefined ? {} : { approvers: gate.approvers }),
      ...(gate.schema === undefined ? {} : { schema: gate.schema }),
      ...(wait?.wakeAt === undefined ? {} : { expiresAt: wait.wakeAt }),
    });
  }
  return { source: 'graph', hash: marker.hash, layout: layoutGraph(marker.graph), states, pending };
}
