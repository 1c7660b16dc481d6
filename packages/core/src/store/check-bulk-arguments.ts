import { invalidInput } from '../errors/invalid-input.js';
import { checkedCall as checked } from './checked-call.js';
import type { BulkStore } from './workflow-store.js';
import { str, optStr, num, obj } from './check-argument-types.js';

// `withArgumentChecks` for `bulk`: bulk-operation records.

function bulkRecord(op: string, value: unknown): void {
  const b = obj(op, 'operation', value);
  for (const field of ['id', 'action', 'state'] as const) str(op, `operation.${field}`, b[field]);
  for (const field of ['revision', 'pages', 'createdAt', 'updatedAt'] as const) num(op, `operation.${field}`, b[field]);
  obj(op, 'operation.filter', b.filter);
  obj(op, 'operation.counts', b.counts);
  optStr(op, 'operation.cursor', b.cursor);
  optStr(op, 'operation.reason', b.reason);
  if (!Array.isArray(b.failures)) throw invalidInput(`${op}: operation.failures`, 'must be an array', b.failures);
}

export function checkedBulk(bulk: BulkStore): BulkStore {
  return {
    create: (operation) =>
      checked(
        () => bulkRecord('bulk.create', operation),
        () => bulk.create(operation),
      ),
    get: (id) =>
      checked(
        () => str('bulk.get', 'id', id),
        () => bulk.get(id),
      ),
    list: (options) =>
      checked(
        () => {
          const o = obj('bulk.list', 'options', options);
          if (typeof o.limit !== 'number' || !Number.isSafeInteger(o.limit) || o.limit < 1 || o.limit > 1000)
            throw invalidInput('bulk.list: options.limit', 'must be an integer from 1 to 1000', o.limit);
          optStr('bulk.list', 'options.before', o.before);
        },
        () => bulk.list(options),
      ),
    update: (operation, expectedRevision) =>
      checked(
        () => {
          bulkRecord('bulk.update', operation);
          num('bulk.update', 'expectedRevision', expectedRevision);
        },
        () => bulk.update(operation, expectedRevision),
      ),
    delete: (id) =>
      checked(
        () => str('bulk.delete', 'id', id),
        () => bulk.delete(id),
      ),
  };
}
