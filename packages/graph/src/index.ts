export { defineGraph, isGraphWorkflow } from './define-graph.js';
export type { DefineGraphOptions, GraphWorkflow } from './define-graph.js';
export { ref, nodeKind, edgesOf } from './graph-spec.js';
export type {
  GraphSpec,
  GraphNode,
  NodeKind,
  NodeBase,
  ActionNode,
  ChildNode,
  EventNode,
  ApprovalNode,
  SleepNode,
  ForEachNode,
  Next,
  Branch,
  Targets,
  Condition,
  Operand,
  Ref,
  Mapping,
  PayloadSchema,
  GraphDuration,
  Edge,
} from './graph-spec.js';
export { GraphError } from './graph-error.js';
export type { GraphErrorCode, GraphIssue, GraphProblem } from './graph-error.js';
export { validateGraph, checkGraph, MAX_GRAPH_NODES, MAX_GRAPH_DEPTH, MAX_GRAPH_VALUES } from './validate-graph.js';
export type { ValidateOptions } from './validate-graph.js';
export { evaluateCondition, resolveMapping } from './graph-data.js';
export type { Scope } from './graph-data.js';
export { graphHash, canonicalJson } from './graph-hash.js';
export { markerName } from './run-graph.js';
export type { GraphAction, ActionContext, GraphMarker } from './run-graph.js';
export { approvalEvent } from './approval-answer.js';
export type { ApprovalAnswer } from './approval-answer.js';
export { approve } from './approve.js';
export type { ApproveOptions, ApproveResult } from './approve.js';
export { graphMarkerOf, nodeStates } from './graph-of-run.js';
export type { NodeState } from './graph-of-run.js';
export { toMermaid } from './to-mermaid.js';
export { historyGraph, MAX_HISTORY_NODES } from './history-graph.js';
export type { HistoryGraph } from './history-graph.js';
export type { MermaidOptions } from './to-mermaid.js';
export { layoutGraph } from './layout-graph.js';
export type { GraphLayout, LaidNode, LaidEdge } from './layout-graph.js';
export { formatCondition } from './to-mermaid.js';
