import { invalidInput } from '../errors/invalid-input.js';

// The type checks every part of `withArgumentChecks` is built from: each throws INVALID_INPUT
// naming the operation and the argument; none reads anything.

export function str(op: string, what: string, value: unknown): void {
  if (typeof value !== 'string') throw invalidInput(`${op}: ${what}`, 'must be a string', value);
}

export function optStr(op: string, what: string, value: unknown): void {
  if (value !== undefined) str(op, what, value);
}

export function num(op: string, what: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidInput(`${op}: ${what}`, 'must be a finite number', value);
}

export function optNum(op: string, what: string, value: unknown): void {
  if (value !== undefined) num(op, what, value);
}

export function fence(op: string, value: unknown, nullable: boolean): void {
  if (nullable && value === null) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw invalidInput(`${op}: fence`, nullable ? 'must be an integer or null' : 'must be an integer', value);
}

export function obj(op: string, what: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidInput(`${op}: ${what}`, 'must be an object', value);
  return value as Record<string, unknown>;
}

export function strings(op: string, what: string, value: unknown): void {
  if (!Array.isArray(value)) throw invalidInput(`${op}: ${what}`, 'must be an array of strings', value);
  for (const item of value) str(op, what, item);
}

export function index(op: string, what: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw invalidInput(`${op}: ${what}`, 'must be an integer from 0', value);
}
