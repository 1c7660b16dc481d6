import type { StepRecord } from '@cairn/core';
import { type GraphLayout, graphMarkerOf, layoutGraph, type NodeState, nodeStates, type PayloadSchema } from '@cairn/graph';

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
  hash: string;
  layout: GraphLayout;
  states: Record<string, NodeState>;
  pending: PendingApproval[];
}

/** The graph view of a run from its steps, or `undefined` when it is not a graph run (its history has no graph marker). */
export function graphView(steps: readonly StepRecord[]): GraphView | undefined {
  const marker = graphMarkerOf(steps);
  if (marker === undefined) return undefined;
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
  return { hash: marker.hash, layout: layoutGraph(marker.graph), states, pending };
}
