// The shape of a graph workflow: plain JSON, so a graph can be stored, reviewed, diffed, drafted by
// a tool and loaded back. Nothing here is code: actions are named, conditions are data.
import type { Json } from '@cairn/core';

/**
 * A reference to data a node can see: `input.<path>` (the run's input), `<node>.<path>` (the
 * output of an earlier node), and inside a `forEach`, `item.<path>` and `index`. Written
 * `{ $ref: 'reserve.id' }`, or with the `ref('reserve.id')` helper.
 */
export interface Ref {
  readonly $ref: string;
}

/**
 * A node's input: any JSON in which every `{ $ref }` object is replaced by the value it names (a
 * ref to a node that did not run, or to a missing path, gives `null`). A literal object that has
 * a `$ref` key is written `{ $literal: { ... } }`.
 */
export type Mapping = Json | Ref | { readonly $literal: Json } | readonly Mapping[] | { readonly [key: string]: Mapping };

/** A value a condition compares: a reference, or a literal JSON scalar or array. */
export type Operand = Ref | string | number | boolean | null | readonly (string | number | boolean | null)[];

/**
 * A condition over the run's data: equality, order, membership, existence, and `and`/`or`/`not`.
 * Declarative: no code, no expression strings. `gt`/`gte`/`lt`/`lte` compare two numbers or two
 * strings (anything else fails the run with `GRAPH_CONDITION`, naming the node); `in` tests that
 * the left operand equals an item of the right one (an array); `exists` is true when the reference
 * names a value that is not `null`.
 */
export type Condition =
  | { readonly eq: readonly [Operand, Operand] }
  | { readonly ne: readonly [Operand, Operand] }
  | { readonly gt: readonly [Operand, Operand] }
  | { readonly gte: readonly [Operand, Operand] }
  | { readonly lt: readonly [Operand, Operand] }
  | { readonly lte: readonly [Operand, Operand] }
  | { readonly in: readonly [Operand, Operand] }
  | { readonly exists: Ref }
  | { readonly and: readonly Condition[] }
  | { readonly or: readonly Condition[] }
  | { readonly not: Condition };

/** One or more nodes to go to: several run in parallel. */
export type Targets = string | readonly string[];

/** A branch: the first clause whose `when` holds is taken, else `otherwise` (else nothing). */
export interface Branch {
  readonly branch: readonly { readonly when: Condition; readonly to: Targets }[];
  readonly otherwise?: Targets;
}

/** Where a node goes when it succeeds: one node, several in parallel, or a branch on the data. */
export type Next = Targets | Branch;

/** A duration: milliseconds, or a string such as `'30s'`, `'2d'` (the engine's `Duration`). */
export type GraphDuration = number | string;

/** What every node may carry. */
export interface NodeBase {
  /** Where to go when the node succeeds. No `next`: the path ends here. */
  readonly next?: Next;
  /**
   * Where to go when the node fails (after its retries): a compensation path. Without it, a
   * failing node fails the run (and the compensations of the actions that succeeded run).
   */
  readonly onError?: string;
  /** Free text for the drawing and the dashboard. */
  readonly label?: string;
}

/** Calls a registered action (a function given to `defineGraph` by name), recorded as one step. */
export interface ActionNode extends NodeBase {
  readonly action: string;
  readonly input?: Mapping;
  /** Extra attempts after the first (default 0). */
  readonly retries?: number;
  /** Wait between attempts (fixed), as a duration. */
  readonly backoff?: GraphDuration;
  /** Per attempt. */
  readonly timeout?: GraphDuration;
  /**
   * A registered action that undoes this one if the run later fails or is cancelled (a saga); it
   * receives `{ input, output }` of this node.
   */
  readonly compensate?: string;
}

/** Starts a child workflow (code or graph) by name and waits for its output. */
export interface ChildNode extends NodeBase {
  readonly workflow: string;
  readonly input?: Mapping;
}

/** Waits for the next message of an event sent to the run; `timeout` expired is a failure (`onError`). */
export interface EventNode extends NodeBase {
  readonly event: string;
  readonly timeout?: GraphDuration;
}

/**
 * A JSON Schema subset for approval payloads: `type` (`object`, `array`, `string`, `number`,
 * `integer`, `boolean`, `null`), `properties`, `required`, `additionalProperties: false`, `items`,
 * `enum`, `minimum`, `maximum`, `minLength`, `maxLength`.
 */
export interface PayloadSchema {
  readonly type?: 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';
  readonly properties?: { readonly [key: string]: PayloadSchema };
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
  readonly items?: PayloadSchema;
  readonly enum?: readonly Json[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
}

/** A human decision: answered with `approve(engine, runId, node, { by, decision, payload })`. */
export interface ApprovalNode extends NodeBase {
  readonly approval: {
    /** What the payload of an answer must be (default: anything, or nothing). */
    readonly schema?: PayloadSchema;
    /** After this long unanswered, the gate expires and takes `onExpiry`. Default: never. */
    readonly expiry?: GraphDuration;
    /**
     * Who may answer (the `by` of an answer). The caller of `approve` asserts the identity: the
     * application must authenticate it. Default: anyone.
     */
    readonly approvers?: readonly string[];
  };
  /** Where a rejection goes. Without it, a rejection is a failure of the node (`onError`). */
  readonly onReject?: string;
  /** Where an expired gate goes. Without it, expiry is a failure of the node (`onError`). */
  readonly onExpiry?: string;
}

/** A durable timer. */
export interface SleepNode extends NodeBase {
  readonly sleep: GraphDuration;
}

/**
 * Runs an action or a child workflow once per item of a list in the data, `concurrency` at a time
 * (1: in sequence; default: all at once). Its output is the list of outputs, in item order.
 */
export interface ForEachNode extends NodeBase {
  readonly forEach: {
    /** The list. */
    readonly items: Ref;
    readonly action?: string;
    readonly workflow?: string;
    /** Each item's input; `item` and `index` are in scope. Default: the item. */
    readonly input?: Mapping;
    readonly concurrency?: number;
    readonly retries?: number;
  };
}

/** Any node. Its kind is the one key among `action`, `workflow`, `event`, `approval`, `sleep`, `forEach`. */
export type GraphNode = ActionNode | ChildNode | EventNode | ApprovalNode | SleepNode | ForEachNode;

/** The kinds of node. */
export type NodeKind = 'action' | 'workflow' | 'event' | 'approval' | 'sleep' | 'forEach';

/** A graph workflow's definition: JSON. */
export interface GraphSpec {
  /** The node (or nodes, in parallel) the run begins with. */
  readonly start: Targets;
  readonly nodes: { readonly [id: string]: GraphNode };
  /** The run's output. Default: `{ <node>: output }` for every node that ran. */
  readonly output?: Mapping;
}

/** The kind of a node (its one kind key). */
export function nodeKind(node: GraphNode): NodeKind {
  if ('action' in node) return 'action';
  if ('workflow' in node) return 'workflow';
  if ('event' in node) return 'event';
  if ('approval' in node) return 'approval';
  if ('sleep' in node) return 'sleep';
  return 'forEach';
}

/** A reference to data: `ref('input.total')`, `ref('reserve.id')`, `ref('item.sku')`. */
export function ref(path: string): Ref {
  return { $ref: path };
}

/** A list of targets as an array. */
export function targetList(targets: Targets | undefined): readonly string[] {
  if (targets === undefined) return [];
  return typeof targets === 'string' ? [targets] : targets;
}

/** Whether `next` is a branch. */
export function isBranch(next: Next | undefined): next is Branch {
  return typeof next === 'object' && next !== null && !Array.isArray(next) && 'branch' in next;
}

/** Every edge leaving a node, in a fixed order, with what takes it. */
export interface Edge {
  readonly from: string;
  readonly to: string;
  /** `next` (plain or parallel), `branch` (with its condition; none for `otherwise`), or an outcome edge. */
  readonly kind: 'next' | 'branch' | 'otherwise' | 'error' | 'reject' | 'expiry';
  readonly when?: Condition;
}

/** The edges out of `id`, in the order: next / branch clauses / otherwise, onReject, onExpiry, onError. */
export function edgesOf(id: string, node: GraphNode): Edge[] {
  const edges: Edge[] = [];
  const next = node.next;
  if (isBranch(next)) {
    for (const clause of next.branch) for (const to of targetList(clause.to)) edges.push({ from: id, to, kind: 'branch', when: clause.when });
    for (const to of targetList(next.otherwise)) edges.push({ from: id, to, kind: 'otherwise' });
  } else {
    for (const to of targetList(next)) edges.push({ from: id, to, kind: 'next' });
  }
  if ('approval' in node) {
    if (node.onReject !== undefined) edges.push({ from: id, to: node.onReject, kind: 'reject' });
    if (node.onExpiry !== undefined) edges.push({ from: id, to: node.onExpiry, kind: 'expiry' });
  }
  if (node.onError !== undefined) edges.push({ from: id, to: node.onError, kind: 'error' });
  return edges;
}
