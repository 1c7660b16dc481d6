// Reading the run's data: references, mappings and conditions, evaluated on JSON only. No code runs
// here and no property outside the data is ever read (own properties only, so `__proto__` or
// `constructor` in a path reads nothing).
import type { Json } from '@cairn/core';
import { GraphError } from './graph-error.js';
import type { Condition, Mapping, Operand, Ref } from './graph-spec.js';

/** What references can name while a node runs. */
export interface Scope {
  readonly input: Json;
  /** Outputs of the nodes that ran (a node that ran with no output has `null`). */
  readonly outputs: ReadonlyMap<string, Json>;
  /** Inside a `forEach`: the item and its index. */
  readonly item?: Json;
  readonly index?: number;
}

/** Whether `value` is a reference object (`{ $ref: string }`, nothing else). */
export function isRef(value: unknown): value is Ref {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === '$ref' && typeof (value as { $ref: unknown }).$ref === 'string';
}

/** Whether `value` is a `{ $literal }` object. */
export function isLiteral(value: unknown): value is { $literal: Json } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === '$literal';
}

/** The segments of a reference path, or `undefined` when it is malformed. */
export function parsePath(path: string): string[] | undefined {
  if (path.length === 0 || path.length > 500) return undefined;
  const parts = path.split('.');
  return parts.every((p) => p.length > 0) ? parts : undefined;
}

/** The value a reference names (`undefined`: nothing there). */
export function resolveRef(ref: Ref, scope: Scope): Json | undefined {
  const parts = parsePath(ref.$ref) ?? [];
  const [root, ...rest] = parts;
  let value: Json | undefined;
  if (root === 'input') value = scope.input;
  else if (root === 'item') value = scope.item;
  else if (root === 'index') value = scope.index;
  else if (root !== undefined && scope.outputs.has(root)) value = scope.outputs.get(root);
  for (const key of rest) {
    if (value === null || typeof value !== 'object') return undefined;
    if (Array.isArray(value)) {
      if (!/^(0|[1-9]\d*)$/.test(key)) return undefined;
      value = value[Number(key)];
    } else {
      value = Object.hasOwn(value, key) ? (value as { [k: string]: Json })[key] : undefined;
    }
  }
  return value;
}

/** A mapping with every reference replaced by its value (`null` where it names nothing). */
export function resolveMapping(mapping: Mapping, scope: Scope): Json {
  if (isRef(mapping)) return resolveRef(mapping, scope) ?? null;
  if (isLiteral(mapping)) return mapping.$literal;
  if (Array.isArray(mapping)) return mapping.map((m: Mapping) => resolveMapping(m, scope));
  if (typeof mapping === 'object' && mapping !== null) {
    const out: { [key: string]: Json } = {};
    for (const [key, value] of Object.entries(mapping)) {
      // A key such as `__proto__` is data here, never the prototype.
      Object.defineProperty(out, key, { value: resolveMapping(value as Mapping, scope), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return mapping as Json;
}

function operand(value: Operand, scope: Scope): Json | undefined {
  return isRef(value) ? resolveRef(value, scope) : (value as Json);
}

/** JSON equality (objects by their keys, arrays item by item). */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as Json[]).length && a.every((x, i) => jsonEqual(x, (b as Json[])[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual((a as { [k: string]: Json })[k], (b as { [k: string]: Json })[k]));
}

/**
 * Evaluates a condition on the data. Throws `GRAPH_CONDITION` naming `node` when it cannot be
 * evaluated: an order comparison of values that are not two numbers or two strings, or `in` whose
 * right operand is not a list.
 */
export function evaluateCondition(condition: Condition, scope: Scope, node: string): boolean {
  const c = condition as { [op: string]: unknown };
  const [op] = Object.keys(c);
  const fail = (why: string): never => {
    throw new GraphError('GRAPH_CONDITION', `node ${JSON.stringify(node)}: condition ${op} cannot be evaluated: ${why}`, { node });
  };
  switch (op) {
    case 'and':
      return (c.and as Condition[]).every((x) => evaluateCondition(x, scope, node));
    case 'or':
      return (c.or as Condition[]).some((x) => evaluateCondition(x, scope, node));
    case 'not':
      return !evaluateCondition(c.not as Condition, scope, node);
    case 'exists': {
      const v = resolveRef(c.exists as Ref, scope);
      return v !== undefined && v !== null;
    }
  }
  const [l, r] = c[op as string] as [Operand, Operand];
  const left = operand(l, scope);
  const right = operand(r, scope);
  switch (op) {
    case 'eq':
      return jsonEqual(left, right);
    case 'ne':
      return !jsonEqual(left, right);
    case 'in':
      if (!Array.isArray(right)) return fail(`the right operand is ${describe(right)}, not a list`);
      return right.some((x) => jsonEqual(left, x));
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const comparable = (typeof left === 'number' && typeof right === 'number') || (typeof left === 'string' && typeof right === 'string');
      if (!comparable) return fail(`it compares ${describe(left)} with ${describe(right)} (two numbers or two strings are needed)`);
      const a = left as number | string;
      const b = right as number | string;
      return op === 'gt' ? a > b : op === 'gte' ? a >= b : op === 'lt' ? a < b : a <= b;
    }
  }
  return fail('unknown operator');
}

function describe(value: Json | undefined): string {
  if (value === undefined) return 'nothing (the reference names no value)';
  const text = JSON.stringify(value);
  return `${Array.isArray(value) ? 'a list' : value === null ? 'null' : `a ${typeof value}`} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
}
