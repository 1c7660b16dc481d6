// Validation of a graph definition, whether written in code or loaded from JSON: every problem is
// collected with the node it is in, and nothing is registered unless there is none. Hostile input
// (cycles, deep nesting, huge graphs, prototype keys) is bounded before it is walked.
import { checkEventName, checkIdentifier, IDENTIFIER_LIMITS, toMilliseconds } from '@cairn/core/backend';
import { isLiteral, isRef, parsePath } from './graph-data.js';
import { GraphError, type GraphIssue, type GraphProblem } from './graph-error.js';
import { edgesOf, isBranch, type GraphNode, type GraphSpec, targetList } from './graph-spec.js';

/** The most nodes a graph may have. */
export const MAX_GRAPH_NODES = 1_000;
/** The deepest nesting of JSON in a graph (conditions, mappings, schemas). */
export const MAX_GRAPH_DEPTH = 32;
/** The most JSON values a graph may hold in all. */
export const MAX_GRAPH_VALUES = 100_000;

const NODE_ID = /^[A-Za-z_][A-Za-z0-9_-]{0,99}$/;
const RESERVED_IDS = new Set(['input', 'item', 'index', '__proto__', 'constructor', 'prototype']);
const COMMON_KEYS = ['next', 'onError', 'label'];
const KIND_KEYS: Record<string, readonly string[]> = {
  action: ['action', 'input', 'retries', 'backoff', 'timeout', 'compensate'],
  workflow: ['workflow', 'input'],
  event: ['event', 'timeout'],
  approval: ['approval', 'onReject', 'onExpiry'],
  sleep: ['sleep'],
  forEach: ['forEach'],
};
const COMPARISONS = new Set(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in']);
const SCHEMA_TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

/** Options of `validateGraph`. */
export interface ValidateOptions {
  /** The registered action names: an action (or compensation) not among them is refused. Default: not checked. */
  readonly actions?: ReadonlySet<string>;
}

type Obj = { readonly [key: string]: unknown };
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every problem of `spec`, each naming its node; empty when the graph is valid. Never throws. */
export function validateGraph(spec: unknown, options: ValidateOptions = {}): GraphIssue[] {
  const issues: GraphIssue[] = [];
  const add = (node: string | undefined, problem: GraphProblem, message: string) =>
    void issues.push({ node, problem, message: `${node === undefined ? 'graph' : `node ${JSON.stringify(node)}`}: ${message}` });

  // 1. Plain, bounded JSON, before anything else reads it.
  const shape = checkJsonShape(spec);
  if (shape !== undefined) {
    add(undefined, shape.problem, shape.message);
    return issues;
  }
  if (!isObject(spec)) {
    add(undefined, 'bad-node', 'a graph is an object { start, nodes, output? }');
    return issues;
  }
  for (const key of Object.keys(spec)) if (!['start', 'nodes', 'output'].includes(key)) add(undefined, 'bad-node', `unknown key ${JSON.stringify(key)}`);
  if (!isObject(spec.nodes)) {
    add(undefined, 'bad-node', '`nodes` must be an object of nodes by id');
    return issues;
  }
  const ids = Object.keys(spec.nodes);
  if (ids.length === 0) add(undefined, 'bad-node', '`nodes` is empty');
  if (ids.length > MAX_GRAPH_NODES) {
    add(undefined, 'too-large', `${ids.length} nodes (at most ${MAX_GRAPH_NODES})`);
    return issues;
  }
  const known = new Set<string>();
  for (const id of ids) {
    if (!NODE_ID.test(id) || RESERVED_IDS.has(id))
      add(id, 'bad-id', 'a node id is a letter or _ then up to 99 letters, digits, _ or -, and not input, item or index');
    else known.add(id);
  }
  const nodes = spec.nodes as { [id: string]: GraphNode };

  // 2. Each node on its own.
  for (const id of known) checkNode(id, nodes[id] as unknown, options, add);
  if (issues.length > 0) return issues;

  // 3. Edges, start, cycles, reachability.
  const starts = checkTargets(undefined, spec.start, '`start`', known, add);
  if (starts.length === 0 && Array.isArray(spec.start)) add(undefined, 'bad-node', '`start` names no node');
  const incoming = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const id of ids) {
    for (const edge of edgesOf(id, nodes[id] as GraphNode)) {
      if (!known.has(edge.to)) add(id, 'unknown-node', `${edge.kind} edge to ${JSON.stringify(edge.to)}, which is not a node`);
      else incoming.get(edge.to)?.push(id);
    }
  }
  for (const s of starts)
    if ((incoming.get(s) ?? []).length > 0) add(s, 'bad-node', `a start node cannot be the target of an edge (from ${incoming.get(s)?.join(', ')})`);
  if (issues.length > 0) return issues;
  const order = topologicalOrder(ids, nodes);
  if (order.length < ids.length) {
    const inCycle = ids.filter((id) => !order.includes(id));
    for (const id of inCycle) add(id, 'cycle', 'is on a cycle (a graph has no loops: use forEach over a list, or a child workflow)');
    return issues;
  }
  const reached = new Set<string>(starts);
  for (const id of order) if (reached.has(id)) for (const edge of edgesOf(id, nodes[id] as GraphNode)) reached.add(edge.to);
  for (const id of ids) if (!reached.has(id)) add(id, 'unreachable', 'no path from `start` reaches it');

  // 4. References: only to the input and to nodes that can have run before.
  const before = ancestors(order, nodes);
  for (const id of ids) {
    const node = nodes[id] as GraphNode;
    const earlier = before.get(id) as Set<string>;
    const where = (what: string) => `${what}`;
    if ('input' in node && node.input !== undefined) checkMappingRefs(id, node.input, earlier, known, false, where('input'), add);
    if ('forEach' in node) {
      checkRef(id, node.forEach.items, earlier, known, false, 'forEach.items', add);
      if (node.forEach.input !== undefined) checkMappingRefs(id, node.forEach.input, earlier, known, true, 'forEach.input', add);
    }
    if (isBranch(node.next)) {
      const self = new Set([...earlier, id]);
      for (const clause of node.next.branch) checkConditionRefs(id, clause.when, self, known, add);
    }
  }
  if (spec.output !== undefined) checkMappingRefs(undefined, spec.output, known, known, false, '`output`', add);
  return issues;
}

/** Validates `spec`; throws `GRAPH_INVALID` listing every problem. Returns it typed. */
export function checkGraph(spec: unknown, options: ValidateOptions = {}): GraphSpec {
  const issues = validateGraph(spec, options);
  if (issues.length > 0) {
    const shown = issues.slice(0, 20).map((i) => `  - ${i.message}`);
    throw new GraphError(
      'GRAPH_INVALID',
      `invalid graph (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${shown.join('\n')}${issues.length > 20 ? `\n  ... ${issues.length - 20} more` : ''}`,
      {
        node: issues[0]?.node,
        issues,
      },
    );
  }
  return spec as GraphSpec;
}

type Add = (node: string | undefined, problem: GraphProblem, message: string) => void;

/** JSON only (no functions, class instances, cycles, non-finite numbers), within the bounds. */
function checkJsonShape(value: unknown): { problem: GraphProblem; message: string } | undefined {
  let count = 0;
  const onPath = new Set<object>();
  const walk = (v: unknown, depth: number, path: string): { problem: GraphProblem; message: string } | undefined => {
    count += 1;
    if (count > MAX_GRAPH_VALUES) return { problem: 'too-large', message: `more than ${MAX_GRAPH_VALUES} JSON values` };
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
    if (typeof v === 'number') return Number.isFinite(v) ? undefined : { problem: 'not-json', message: `${path} is ${v}, not a JSON number` };
    if (typeof v !== 'object') return { problem: 'not-json', message: `${path} is a ${typeof v}, not JSON` };
    if (depth > 2 * MAX_GRAPH_DEPTH + 16) return { problem: 'too-deep', message: `${path} is nested deeper than ${2 * MAX_GRAPH_DEPTH + 16} levels` };
    const proto = Object.getPrototypeOf(v);
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null)
      return { problem: 'not-json', message: `${path} is a class instance, not a plain object` };
    if (onPath.has(v)) return { problem: 'not-json', message: `${path} refers to itself (a cycle in the object)` };
    onPath.add(v);
    const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
    for (const [key, child] of entries) {
      const found = walk(child, depth + 1, `${path}.${key}`);
      if (found) return found;
    }
    onPath.delete(v);
    return undefined;
  };
  return walk(value, 0, 'graph');
}

function checkNode(id: string, raw: unknown, options: ValidateOptions, add: Add): void {
  if (!isObject(raw)) {
    add(id, 'bad-node', 'a node is an object');
    return;
  }
  const kinds = Object.keys(KIND_KEYS).filter((k) => Object.hasOwn(raw, k));
  if (kinds.length !== 1) {
    add(id, 'bad-node', kinds.length === 0 ? `has no kind (one of ${Object.keys(KIND_KEYS).join(', ')})` : `has several kinds (${kinds.join(', ')})`);
    return;
  }
  const kind = kinds[0] as string;
  for (const key of Object.keys(raw))
    if (!COMMON_KEYS.includes(key) && !KIND_KEYS[kind]?.includes(key)) add(id, 'bad-node', `unknown key ${JSON.stringify(key)} for a ${kind} node`);
  if (raw.label !== undefined && typeof raw.label !== 'string') add(id, 'bad-node', '`label` must be a string');
  for (const key of ['onError', 'onReject', 'onExpiry'])
    if (raw[key] !== undefined && typeof raw[key] !== 'string') add(id, 'bad-node', `\`${key}\` must be a node id`);
  checkNext(id, raw.next, add);
  const action = (name: unknown, what: string) => {
    if (typeof name !== 'string' || name.length === 0) {
      add(id, 'bad-node', `${what} must be an action name`);
      return;
    }
    if (options.actions && !options.actions.has(name)) add(id, 'unknown-action', `${what} ${JSON.stringify(name)} is not a registered action`);
  };
  const duration = (value: unknown, what: string) => {
    if (value === undefined) return;
    try {
      toMilliseconds(value as number, what);
    } catch (error) {
      add(id, 'bad-duration', `${what}: ${(error as Error).message}`);
    }
  };
  const count = (value: unknown, what: string, min: number, max: number) => {
    if (value !== undefined && (!Number.isInteger(value) || (value as number) < min || (value as number) > max))
      add(id, 'bad-node', `${what} must be an integer from ${min} to ${max}`);
  };
  const identifier = (value: unknown, what: string, check: (what: string, v: unknown) => unknown) => {
    try {
      check(what, value);
    } catch (error) {
      add(id, 'bad-node', (error as Error).message);
    }
  };
  switch (kind) {
    case 'action':
      action(raw.action, '`action`');
      if (raw.compensate !== undefined) action(raw.compensate, '`compensate`');
      count(raw.retries, '`retries`', 0, 100);
      duration(raw.backoff, '`backoff`');
      duration(raw.timeout, '`timeout`');
      break;
    case 'workflow':
      identifier(raw.workflow, '`workflow`', (w, v) => checkIdentifier(w, v, IDENTIFIER_LIMITS.workflowName));
      break;
    case 'event':
      identifier(raw.event, '`event`', checkEventName);
      duration(raw.timeout, '`timeout`');
      break;
    case 'sleep':
      if (raw.sleep === undefined) add(id, 'bad-duration', '`sleep` needs a duration');
      duration(raw.sleep, '`sleep`');
      break;
    case 'approval': {
      const gate = raw.approval;
      if (!isObject(gate)) {
        add(id, 'bad-node', '`approval` must be an object { schema?, expiry?, approvers? }');
        return;
      }
      for (const key of Object.keys(gate))
        if (!['schema', 'expiry', 'approvers'].includes(key)) add(id, 'bad-node', `unknown key ${JSON.stringify(key)} in \`approval\``);
      duration(gate.expiry, '`approval.expiry`');
      if (
        gate.approvers !== undefined &&
        (!Array.isArray(gate.approvers) || gate.approvers.length === 0 || !gate.approvers.every((a) => typeof a === 'string' && a.length > 0))
      )
        add(id, 'bad-node', '`approval.approvers` must be a non-empty list of non-empty strings');
      if (gate.schema !== undefined) checkSchema(id, gate.schema, 'approval.schema', 0, add);
      if (raw.onExpiry !== undefined && gate.expiry === undefined) add(id, 'bad-node', '`onExpiry` needs `approval.expiry`');
      break;
    }
    case 'forEach': {
      const each = raw.forEach;
      if (!isObject(each)) {
        add(id, 'bad-node', '`forEach` must be an object { items, action | workflow, input?, concurrency? }');
        return;
      }
      for (const key of Object.keys(each))
        if (!['items', 'action', 'workflow', 'input', 'concurrency', 'retries'].includes(key))
          add(id, 'bad-node', `unknown key ${JSON.stringify(key)} in \`forEach\``);
      if (!isRef(each.items)) add(id, 'bad-ref', '`forEach.items` must be a reference ({ $ref }) to a list');
      if ((each.action === undefined) === (each.workflow === undefined)) add(id, 'bad-node', '`forEach` runs exactly one of `action` or `workflow`');
      if (each.action !== undefined) action(each.action, '`forEach.action`');
      if (each.workflow !== undefined) identifier(each.workflow, '`forEach.workflow`', (w, v) => checkIdentifier(w, v, IDENTIFIER_LIMITS.workflowName));
      count(each.concurrency, '`forEach.concurrency`', 1, 1000);
      count(each.retries, '`forEach.retries`', 0, 100);
      break;
    }
  }
}

function checkNext(id: string, next: unknown, add: Add): void {
  if (next === undefined || typeof next === 'string') return;
  if (Array.isArray(next)) {
    if (next.length === 0 || !next.every((t) => typeof t === 'string')) add(id, 'bad-node', '`next` as a list must name at least one node');
    else if (new Set(next).size !== next.length) add(id, 'bad-node', '`next` names a node twice');
    return;
  }
  if (!isObject(next) || !Array.isArray(next.branch)) {
    add(id, 'bad-node', '`next` is a node id, a list of node ids, or { branch: [{ when, to }], otherwise? }');
    return;
  }
  for (const key of Object.keys(next)) if (key !== 'branch' && key !== 'otherwise') add(id, 'bad-node', `unknown key ${JSON.stringify(key)} in \`next\``);
  if (next.branch.length === 0) add(id, 'bad-node', '`next.branch` is empty');
  for (const [i, clause] of next.branch.entries()) {
    if (!isObject(clause) || clause.when === undefined || clause.to === undefined || Object.keys(clause).length !== 2) {
      add(id, 'bad-condition', `\`next.branch[${i}]\` must be { when, to }`);
      continue;
    }
    checkCondition(id, clause.when, `next.branch[${i}].when`, 0, add);
    checkTargetShape(id, clause.to, `next.branch[${i}].to`, add);
  }
  if (next.otherwise !== undefined) checkTargetShape(id, next.otherwise, '`next.otherwise`', add);
}

function checkTargetShape(id: string, to: unknown, what: string, add: Add): void {
  if (typeof to === 'string') return;
  if (!Array.isArray(to) || to.length === 0 || !to.every((t) => typeof t === 'string'))
    add(id, 'bad-node', `${what} must be a node id or a non-empty list of them`);
}

function checkTargets(node: string | undefined, value: unknown, what: string, known: ReadonlySet<string>, add: Add): string[] {
  if (typeof value !== 'string' && !(Array.isArray(value) && value.every((v) => typeof v === 'string'))) {
    add(node, 'bad-node', `${what} must be a node id or a list of node ids`);
    return [];
  }
  const list = targetList(value as string | string[]);
  for (const t of list) if (!known.has(t)) add(node, 'unknown-node', `${what} names ${JSON.stringify(t)}, which is not a node`);
  return list.filter((t) => known.has(t));
}

function checkOperand(id: string, value: unknown, what: string, add: Add): void {
  if (isRef(value) || value === null || ['string', 'number', 'boolean'].includes(typeof value)) return;
  if (Array.isArray(value) && value.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))) return;
  add(id, 'bad-condition', `${what}: an operand is a reference ({ $ref }), a JSON scalar, or a list of scalars`);
}

function checkCondition(id: string, raw: unknown, what: string, depth: number, add: Add): void {
  if (depth > MAX_GRAPH_DEPTH) {
    add(id, 'too-deep', `${what}: conditions nest deeper than ${MAX_GRAPH_DEPTH} levels`);
    return;
  }
  if (!isObject(raw) || Object.keys(raw).length !== 1) {
    add(id, 'bad-condition', `${what}: a condition is an object with one operator`);
    return;
  }
  const [op] = Object.keys(raw) as [string];
  const arg = raw[op];
  if (COMPARISONS.has(op)) {
    if (!Array.isArray(arg) || arg.length !== 2) {
      add(id, 'bad-condition', `${what}: ${op} takes two operands [left, right]`);
      return;
    }
    for (const [i, o] of arg.entries()) checkOperand(id, o, `${what}.${op}[${i}]`, add);
  } else if (op === 'and' || op === 'or') {
    if (!Array.isArray(arg) || arg.length === 0) {
      add(id, 'bad-condition', `${what}: ${op} takes a non-empty list of conditions`);
      return;
    }
    for (const [i, c] of arg.entries()) checkCondition(id, c, `${what}.${op}[${i}]`, depth + 1, add);
  } else if (op === 'not') {
    checkCondition(id, arg, `${what}.not`, depth + 1, add);
  } else if (op === 'exists') {
    if (!isRef(arg)) add(id, 'bad-condition', `${what}: exists takes a reference ({ $ref })`);
  } else {
    add(id, 'bad-condition', `${what}: unknown operator ${JSON.stringify(op)} (eq, ne, gt, gte, lt, lte, in, exists, and, or, not)`);
  }
}

function checkSchema(id: string, raw: unknown, what: string, depth: number, add: Add): void {
  if (depth > MAX_GRAPH_DEPTH) {
    add(id, 'too-deep', `${what}: the schema nests deeper than ${MAX_GRAPH_DEPTH} levels`);
    return;
  }
  if (!isObject(raw)) {
    add(id, 'bad-schema', `${what} must be an object`);
    return;
  }
  const allowed = ['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'minimum', 'maximum', 'minLength', 'maxLength'];
  for (const key of Object.keys(raw))
    if (!allowed.includes(key)) add(id, 'bad-schema', `${what}: unsupported keyword ${JSON.stringify(key)} (supported: ${allowed.join(', ')})`);
  if (raw.type !== undefined && !SCHEMA_TYPES.has(raw.type as string)) add(id, 'bad-schema', `${what}.type: one of ${[...SCHEMA_TYPES].join(', ')}`);
  if (raw.properties !== undefined) {
    if (!isObject(raw.properties)) add(id, 'bad-schema', `${what}.properties must be an object`);
    else for (const [key, sub] of Object.entries(raw.properties)) checkSchema(id, sub, `${what}.properties.${key}`, depth + 1, add);
  }
  if (raw.items !== undefined) checkSchema(id, raw.items, `${what}.items`, depth + 1, add);
  if (raw.required !== undefined && !(Array.isArray(raw.required) && raw.required.every((r) => typeof r === 'string')))
    add(id, 'bad-schema', `${what}.required must be a list of names`);
  if (raw.additionalProperties !== undefined && typeof raw.additionalProperties !== 'boolean')
    add(id, 'bad-schema', `${what}.additionalProperties must be a boolean`);
  if (raw.enum !== undefined && (!Array.isArray(raw.enum) || raw.enum.length === 0)) add(id, 'bad-schema', `${what}.enum must be a non-empty list`);
  for (const key of ['minimum', 'maximum', 'minLength', 'maxLength'])
    if (raw[key] !== undefined && typeof raw[key] !== 'number') add(id, 'bad-schema', `${what}.${key} must be a number`);
}

/** The nodes in an order where every edge goes forward; shorter than `ids` when there is a cycle (Kahn). */
export function topologicalOrder(ids: readonly string[], nodes: { readonly [id: string]: GraphNode }): string[] {
  const indegree = new Map<string, number>(ids.map((id) => [id, 0]));
  for (const id of ids) for (const e of edgesOf(id, nodes[id] as GraphNode)) indegree.set(e.to, (indegree.get(e.to) ?? 0) + 1);
  const ready = ids.filter((id) => indegree.get(id) === 0);
  const order: string[] = [];
  while (ready.length > 0) {
    const id = ready.shift() as string;
    order.push(id);
    for (const e of edgesOf(id, nodes[id] as GraphNode)) {
      const left = (indegree.get(e.to) ?? 0) - 1;
      indegree.set(e.to, left);
      if (left === 0) ready.push(e.to);
    }
  }
  return order;
}

/** For each node, the nodes that can have run before it (its ancestors). */
function ancestors(order: readonly string[], nodes: { readonly [id: string]: GraphNode }): Map<string, Set<string>> {
  const before = new Map<string, Set<string>>(order.map((id) => [id, new Set<string>()]));
  for (const id of order) {
    const mine = before.get(id) as Set<string>;
    for (const e of edgesOf(id, nodes[id] as GraphNode)) {
      const theirs = before.get(e.to) as Set<string>;
      theirs.add(id);
      for (const a of mine) theirs.add(a);
    }
  }
  return before;
}

function checkRef(
  node: string | undefined,
  raw: unknown,
  earlier: ReadonlySet<string>,
  known: ReadonlySet<string>,
  inForEach: boolean,
  what: string,
  add: Add,
): void {
  if (!isRef(raw)) return;
  const parts = parsePath(raw.$ref);
  if (parts === undefined) {
    add(node, 'bad-ref', `${what}: reference ${JSON.stringify(raw.$ref)} is not a dotted path`);
    return;
  }
  const [root] = parts as [string];
  if (root === 'input') return;
  if (root === 'item' || root === 'index') {
    if (!inForEach) add(node, 'bad-ref', `${what}: ${root} is only in scope in \`forEach.input\``);
    else if (root === 'index' && parts.length > 1) add(node, 'bad-ref', `${what}: index is a number and has no ${parts.slice(1).join('.')}`);
    return;
  }
  if (!known.has(root)) {
    add(node, 'bad-ref', `${what}: reference ${JSON.stringify(raw.$ref)} names no node (nor input, item, index)`);
    return;
  }
  if (!earlier.has(root))
    add(node, 'ref-not-before', `${what}: reference ${JSON.stringify(raw.$ref)} names node ${JSON.stringify(root)}, which cannot have run before this point`);
}

function checkMappingRefs(
  node: string | undefined,
  mapping: unknown,
  earlier: ReadonlySet<string>,
  known: ReadonlySet<string>,
  inForEach: boolean,
  what: string,
  add: Add,
  depth = 0,
): void {
  if (depth > MAX_GRAPH_DEPTH) {
    add(node, 'too-deep', `${what}: nests deeper than ${MAX_GRAPH_DEPTH} levels`);
    return;
  }
  if (isRef(mapping)) {
    checkRef(node, mapping, earlier, known, inForEach, what, add);
    return;
  }
  if (isLiteral(mapping)) return;
  if (typeof mapping === 'object' && mapping !== null) {
    if (!Array.isArray(mapping) && Object.hasOwn(mapping, '$ref'))
      add(node, 'bad-ref', `${what}: an object with $ref must be exactly { $ref: "path" } (wrap literal data in { $literal })`);
    for (const [key, value] of Object.entries(mapping)) checkMappingRefs(node, value, earlier, known, inForEach, `${what}.${key}`, add, depth + 1);
  }
}

function checkConditionRefs(node: string, condition: unknown, earlier: ReadonlySet<string>, known: ReadonlySet<string>, add: Add): void {
  const walk = (c: unknown): void => {
    if (isRef(c)) {
      checkRef(node, c, earlier, known, false, 'condition', add);
      return;
    }
    if (typeof c === 'object' && c !== null) for (const v of Object.values(c)) walk(v);
  };
  walk(condition);
}
