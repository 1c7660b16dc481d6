// A graph as a Mermaid flowchart: start, each node by its kind's shape, parallel and branch edges
// (with their conditions), outcome edges (reject, expiry) labelled, error edges dashed. Node ids in
// the drawing are `n1`, `n2`, ... in the graph's order, so no node id can clash with a Mermaid
// keyword (`end`, `graph`, ...); the node's own id is its label's first line.
import type { NodeState } from './graph-of-run.js';
import { type Condition, edgesOf, type GraphNode, type GraphSpec, nodeKind, type Operand, targetList } from './graph-spec.js';
import { isRef } from './graph-data.js';

/** Options of `toMermaid`. */
export interface MermaidOptions {
  /** Flow direction (default `TD`, top-down). */
  readonly direction?: 'TD' | 'LR';
  /** Colours nodes by their state in a run (see `nodeStates`). */
  readonly states?: { readonly [node: string]: NodeState };
}

const STATE_STYLES: Record<NodeState, string> = {
  'not-run': 'fill:#f4f4f5,stroke:#a1a1aa,color:#52525b',
  running: 'fill:#dbeafe,stroke:#2563eb',
  waiting: 'fill:#fef9c3,stroke:#ca8a04',
  'waiting-approval': 'fill:#ffedd5,stroke:#ea580c,stroke-width:2px',
  succeeded: 'fill:#dcfce7,stroke:#16a34a',
  failed: 'fill:#fee2e2,stroke:#dc2626',
};

/** Text safe inside a quoted Mermaid label. */
function text(value: string): string {
  return value.replaceAll('&', '#amp;').replaceAll('"', '#quot;').replaceAll('<', '#lt;').replaceAll('>', '#gt;').replaceAll('\n', ' ');
}

function operand(o: Operand): string {
  return isRef(o) ? o.$ref : JSON.stringify(o);
}

const SYMBOLS: Record<string, string> = { eq: '==', ne: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=', in: 'in' };

/** A condition as one line of text: `input.total > 1000 and not exists(review.note)`. */
export function formatCondition(c: Condition, nested = false): string {
  const x = c as { [op: string]: unknown };
  const [op] = Object.keys(x) as [string];
  const wrap = (s: string) => (nested ? `(${s})` : s);
  if (op === 'and' || op === 'or') return wrap((x[op] as Condition[]).map((y) => formatCondition(y, true)).join(` ${op} `));
  if (op === 'not') return `not (${formatCondition(x.not as Condition)})`;
  if (op === 'exists') return `exists(${(x.exists as { $ref: string }).$ref})`;
  const [l, r] = x[op] as [Operand, Operand];
  return `${operand(l)} ${SYMBOLS[op] ?? op} ${operand(r)}`;
}

function shape(id: string, node: GraphNode): string {
  const kind = nodeKind(node);
  const detail =
    kind === 'action'
      ? `action: ${(node as { action: string }).action}`
      : kind === 'workflow'
        ? `workflow: ${(node as { workflow: string }).workflow}`
        : kind === 'event'
          ? `event: ${(node as { event: string }).event}`
          : kind === 'approval'
            ? `approval${(node as { approval: { approvers?: string[] } }).approval.approvers ? `: ${(node as { approval: { approvers: string[] } }).approval.approvers.join(', ')}` : ''}`
            : kind === 'sleep'
              ? `sleep ${String((node as { sleep: unknown }).sleep)}`
              : `for each ${(node as { forEach: { items: { $ref: string } } }).forEach.items.$ref}: ${(node as { forEach: { action?: string; workflow?: string } }).forEach.action ?? (node as { forEach: { workflow: string } }).forEach.workflow}`;
  const label = `"${text(id)}<br/>${text(node.label ?? detail)}"`;
  switch (kind) {
    case 'action':
      return `[${label}]`;
    case 'workflow':
      return `[[${label}]]`;
    case 'event':
      return `>${label}]`;
    case 'approval':
      return `{{${label}}}`;
    case 'sleep':
      return `(${label})`;
    case 'forEach':
      return `[/${label}/]`;
  }
}

/** The graph as a Mermaid `flowchart`, one statement per line, the same text for the same graph. */
export function toMermaid(graph: GraphSpec, options: MermaidOptions = {}): string {
  const ids = Object.keys(graph.nodes);
  const key = new Map(ids.map((id, i) => [id, `n${i + 1}`]));
  const lines = [`flowchart ${options.direction ?? 'TD'}`, '  start((start))'];
  for (const id of ids) lines.push(`  ${key.get(id)}${shape(id, graph.nodes[id] as GraphNode)}`);
  const ends = ids.filter((id) => edgesOf(id, graph.nodes[id] as GraphNode).length === 0);
  if (ends.length > 0) lines.push('  finish((end))');
  for (const s of targetList(graph.start)) lines.push(`  start --> ${key.get(s)}`);
  for (const id of ids) {
    for (const e of edgesOf(id, graph.nodes[id] as GraphNode)) {
      const from = key.get(e.from);
      const to = key.get(e.to);
      if (e.kind === 'next') lines.push(`  ${from} --> ${to}`);
      else if (e.kind === 'branch') lines.push(`  ${from} -->|"${text(formatCondition(e.when as Condition))}"| ${to}`);
      else if (e.kind === 'error') lines.push(`  ${from} -.->|"error"| ${to}`);
      else lines.push(`  ${from} -->|"${e.kind === 'otherwise' ? 'otherwise' : e.kind === 'reject' ? 'rejected' : 'expired'}"| ${to}`);
    }
  }
  for (const id of ends) lines.push(`  ${key.get(id)} --> finish`);
  if (options.states !== undefined) {
    const used = new Set<NodeState>();
    for (const id of ids) {
      const state = options.states[id];
      if (state === undefined) continue;
      used.add(state);
      lines.push(`  class ${key.get(id)} ${state.replace('-', '_')}`);
    }
    for (const state of Object.keys(STATE_STYLES) as NodeState[])
      if (used.has(state)) lines.push(`  classDef ${state.replace('-', '_')} ${STATE_STYLES[state]}`);
  }
  return `${lines.join('\n')}\n`;
}
