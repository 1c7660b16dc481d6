// A code workflow's run drawn from its history (issue 33: "code workflows get the same treatment
// where their recorded history allows"). A code run records no graph, only its calls; so the drawing
// is what the run did: each recorded call a node in call order (`seq`), shaped by its kind and
// coloured by its state, as the same `toMermaid` and `layoutGraph` draw a graph run. Calls that
// ran concurrently are drawn in the order they were called: the history keeps call order, not
// which calls a `Promise.all` grouped.
import type { StepRecord } from '@cairn/core';
import type { NodeState } from './graph-of-run.js';
import type { GraphNode, GraphSpec } from './graph-spec.js';

/** At most this many calls are drawn; a longer history ends with one node saying how many more. */
export const MAX_HISTORY_NODES = 200;

/** A code run's history as a graph (one node per recorded call, in call order) and each node's state. */
export interface HistoryGraph {
  readonly graph: GraphSpec;
  readonly states: { readonly [node: string]: NodeState };
}

function nodeOf(step: StepRecord): GraphNode {
  // A child's and an event's step are named `child:<workflow>` and `event:<name>`: the label says the kind once.
  const bare = step.name.startsWith(`${step.kind}:`) ? step.name.slice(step.kind.length + 1) : step.name;
  switch (step.kind) {
    case 'child':
      return { workflow: bare, label: `child: ${bare}` };
    case 'event':
      return { event: bare, label: `event: ${bare}` };
    case 'sleep':
      return { sleep: 0, label: `sleep: ${step.name}` };
    case 'task':
      return { action: step.name, label: `${step.queued ? 'queued step' : 'step'}: ${step.name}` };
    default:
      // select, now, random, uuid, patch: recorded values, drawn as what they are.
      return { action: step.name, label: `${step.kind}: ${step.name}` };
  }
}

function stateOf(step: StepRecord): NodeState {
  if (step.status === 'succeeded') return 'succeeded';
  if (step.status === 'failed') return 'failed';
  if (step.status === 'waiting') return 'waiting';
  return 'running';
}

/**
 * The drawing of a code run: its recorded calls (from `engine.steps(runId)`) in call order, each with
 * its state. Deterministic: the same history gives the same graph. An empty history gives a graph
 * with one `not started` node.
 */
export function historyGraph(steps: readonly StepRecord[]): HistoryGraph {
  const ordered = [...steps].sort((a, b) => a.seq - b.seq);
  const drawn = ordered.slice(0, MAX_HISTORY_NODES);
  const nodes: Record<string, GraphNode> = {};
  const states: Record<string, NodeState> = {};
  // Node ids are the step keys: unique within a run, and `toMermaid` never uses them as Mermaid ids.
  const ids = drawn.map((s) => s.key);
  drawn.forEach((step, i) => {
    const next = ids[i + 1];
    nodes[step.key] = { ...nodeOf(step), ...(next === undefined ? {} : { next }) } as GraphNode;
    states[step.key] = stateOf(step);
  });
  if (ordered.length > drawn.length) {
    const more = `… ${ordered.length - drawn.length} more calls`;
    const last = ids.at(-1) as string;
    nodes[last] = { ...(nodes[last] as GraphNode), next: more } as GraphNode;
    nodes[more] = { action: 'more', label: more };
    states[more] = 'not-run';
  }
  if (ids.length === 0) {
    nodes['not started'] = { action: 'none', label: 'no call recorded yet' };
    states['not started'] = 'not-run';
    return { graph: { start: 'not started', nodes }, states };
  }
  return { graph: { start: ids[0] as string, nodes }, states };
}
