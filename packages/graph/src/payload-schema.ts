// The check of an approval's payload against its gate's schema: a small JSON Schema subset, so the
// schema is data in the graph like everything else (see `PayloadSchema`).
import type { Json } from '@cairn/core';
import { jsonEqual } from './graph-data.js';
import type { PayloadSchema } from './graph-spec.js';

/** The problems of `value` against `schema`, each with its path (`payload.amount`); empty when it conforms. */
export function payloadProblems(schema: PayloadSchema, value: Json | undefined, path = 'payload'): string[] {
  const problems: string[] = [];
  const v = value === undefined ? null : value;
  const type = jsonType(v);
  if (schema.type !== undefined && !(schema.type === type || (schema.type === 'number' && type === 'integer'))) {
    problems.push(
      `${path} must be ${schema.type === 'integer' || schema.type === 'array' || schema.type === 'object' ? 'an' : 'a'} ${schema.type}, got ${type}`,
    );
    return problems;
  }
  if (schema.enum !== undefined && !schema.enum.some((e) => jsonEqual(e, v))) problems.push(`${path} must be one of ${JSON.stringify(schema.enum)}`);
  if (typeof v === 'number') {
    if (schema.minimum !== undefined && v < schema.minimum) problems.push(`${path} must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && v > schema.maximum) problems.push(`${path} must be at most ${schema.maximum}`);
  }
  if (typeof v === 'string') {
    if (schema.minLength !== undefined && v.length < schema.minLength) problems.push(`${path} must have at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && v.length > schema.maxLength) problems.push(`${path} must have at most ${schema.maxLength} characters`);
  }
  if (Array.isArray(v) && schema.items !== undefined) {
    const items = schema.items;
    for (const [i, item] of v.entries()) problems.push(...payloadProblems(items, item, `${path}[${i}]`));
  }
  if (type === 'object') {
    const obj = v as { [key: string]: Json };
    for (const key of schema.required ?? []) if (!Object.hasOwn(obj, key)) problems.push(`${path}.${key} is required`);
    for (const [key, item] of Object.entries(obj)) {
      const sub = schema.properties !== undefined && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
      if (sub !== undefined) problems.push(...payloadProblems(sub, item, `${path}.${key}`));
      else if (schema.additionalProperties === false) problems.push(`${path}.${key} is not allowed`);
    }
  }
  return problems;
}

function jsonType(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}
