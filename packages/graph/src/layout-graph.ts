// A layout of a graph for drawing it without a renderer: nodes in layers (a node's layer is the
// longest path to it from a start node), each layer a row, edges as straight segments. Numbers
// only: whoever draws it (the dashboard's SVG) places text itself, as text.
import { formatCondition } from './to-mermaid.js';
import { type Condition, edgesOf, type GraphNode, type GraphSpec, type NodeKind, nodeKind } from './graph-spec.js';
import { topologicalOrder } from './validate-graph.js';

/** One node's box. */
export interface LaidNode {
  readonly id: string;
  readonly kind: NodeKind;
  /** What the node does (`action: charge`), or its label. */
  readonly detail: string;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** One edge, from the bottom of one box to the top of another. */
export interface LaidEdge {
  readonly from: string;
  readonly to: string;
  readonly kind: 'next' | 'branch' | 'otherwise' | 'error' | 'reject' | 'expiry';
  /** The condition of a branch edge, or the outcome (`otherwise`, `error`, `rejected`, `expired`). */
  readonly label?: string;
  /** The polyline, from the bottom centre of `from` to the top centre of `to`: two points, or four for an edge that goes round the layers it skips. */
  readonly points: readonly (readonly [number, number])[];
}

/** A graph laid out in a `width` × `height` box. */
export interface GraphLayout {
  readonly width: number;
  readonly height: number;
  readonly nodes: readonly LaidNode[];
  readonly edges: readonly LaidEdge[];
}

const NODE_W = 180;
const NODE_H = 48;
const GAP_X = 40;
const GAP_Y = 56;
const MARGIN = 20;

function detailOf(node: GraphNode): string {
  if (node.label !== undefined) return node.label;
  switch (nodeKind(node)) {
    case 'action':
      return `action: ${(node as { action: string }).action}`;
    case 'workflow':
      return `workflow: ${(node as { workflow: string }).workflow}`;
    case 'event':
      return `event: ${(node as { event: string }).event}`;
    case 'approval':
      return 'approval';
    case 'sleep':
      return `sleep ${String((node as { sleep: unknown }).sleep)}`;
    case 'forEach':
      return `for each ${(node as { forEach: { items: { $ref: string } } }).forEach.items.$ref}`;
  }
}

/** Lays out a (valid) graph: layers top to bottom, nodes in a layer in the graph's order, centred. */
export function layoutGraph(graph: GraphSpec): GraphLayout {
  const ids = Object.keys(graph.nodes);
  const order = topologicalOrder(ids, graph.nodes);
  const layer = new Map<string, number>(ids.map((id) => [id, 0]));
  for (const id of order) for (const e of edgesOf(id, graph.nodes[id] as GraphNode)) layer.set(e.to, Math.max(layer.get(e.to) ?? 0, (layer.get(id) ?? 0) + 1));
  const rows: string[][] = [];
  for (const id of ids) (rows[layer.get(id) ?? 0] ??= []).push(id);
  const widest = Math.max(...rows.map((r) => r.length));
  // Room on the right for edges that go round skipped layers.
  const width = MARGIN * 2 + widest * NODE_W + (widest - 1) * GAP_X + 40;
  const height = MARGIN * 2 + rows.length * NODE_H + (rows.length - 1) * GAP_Y;
  const place = new Map<string, LaidNode>();
  rows.forEach((row, r) => {
    const rowWidth = row.length * NODE_W + (row.length - 1) * GAP_X;
    const left = (width - 40 - rowWidth) / 2;
    for (const [i, id] of row.entries()) {
      const node = graph.nodes[id] as GraphNode;
      place.set(id, {
        id,
        kind: nodeKind(node),
        detail: detailOf(node),
        x: left + i * (NODE_W + GAP_X),
        y: MARGIN + r * (NODE_H + GAP_Y),
        width: NODE_W,
        height: NODE_H,
      });
    }
  });
  const edges: LaidEdge[] = [];
  for (const id of ids) {
    for (const e of edgesOf(id, graph.nodes[id] as GraphNode)) {
      const a = place.get(e.from) as LaidNode;
      const b = place.get(e.to) as LaidNode;
      const la = layer.get(e.from) ?? 0;
      const lb = layer.get(e.to) ?? 0;
      const start: [number, number] = [a.x + a.width / 2, a.y + a.height];
      const end: [number, number] = [b.x + b.width / 2, b.y];
      // An edge that skips layers goes round the boxes in between, on their right.
      const between = [...place.values()].filter((n) => {
        const l = layer.get(n.id) ?? 0;
        return l > la && l < lb;
      });
      const side = Math.max(0, ...between.map((n) => n.x + n.width)) + 16;
      const points: [number, number][] =
        lb - la > 1 && between.length > 0 ? [start, [side, start[1] + GAP_Y / 2], [side, end[1] - GAP_Y / 2], end] : [start, end];
      const label =
        e.kind === 'branch'
          ? formatCondition(e.when as Condition)
          : e.kind === 'next'
            ? undefined
            : e.kind === 'reject'
              ? 'rejected'
              : e.kind === 'expiry'
                ? 'expired'
                : e.kind;
      edges.push({ from: e.from, to: e.to, kind: e.kind, ...(label === undefined ? {} : { label }), points });
    }
  }
  return { width, height, nodes: ids.map((id) => place.get(id) as LaidNode), edges };
}
