import { invalidInput } from '../errors/invalid-input.js';
import type { StoreDoctorOptions } from './store-doctor.js';

/**
 * Checks the options of a store's `doctor` hook (a backend calls it first): `fix` a boolean, `now`
 * a finite number, `limit` an integer from 1 to 100 000. Returns them; throws `INVALID_INPUT`
 * naming the option otherwise, before anything is read.
 */
export function checkStoreDoctorOptions(value: unknown): StoreDoctorOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidInput('store doctor options', 'must be an object', value);
  const { fix, now, limit } = value as Record<string, unknown>;
  if (typeof fix !== 'boolean') throw invalidInput('store doctor fix', 'must be true or false', fix);
  if (typeof now !== 'number' || !Number.isFinite(now)) throw invalidInput('store doctor now', 'must be a finite number (epoch milliseconds)', now);
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 100_000)
    throw invalidInput('store doctor limit', 'must be an integer from 1 to 100000', limit);
  return { fix, now, limit };
}
