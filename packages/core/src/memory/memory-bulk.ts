import type { BulkOperationRecord } from '../model/bulk.js';
import type { BulkStore } from '../store/workflow-store.js';

/** The memory store's `BulkStore`: atomic because every method runs synchronously between awaits. */
export function createMemoryBulk(): BulkStore {
  const operations = new Map<string, BulkOperationRecord>();
  // Records are copied in and out, so a caller's later changes never reach the store.
  const copy = (operation: BulkOperationRecord): BulkOperationRecord => structuredClone(operation);
  return {
    async create(operation) {
      const existing = operations.get(operation.id);
      if (existing) return { operation: copy(existing), created: false };
      const record = { ...copy(operation), revision: 1 };
      operations.set(record.id, record);
      return { operation: copy(record), created: true };
    },
    async get(id) {
      const operation = operations.get(id);
      return operation === undefined ? undefined : copy(operation);
    },
    async list({ limit, before }) {
      // Sorted on each call: an operator's listing of a few operations, never a loop's.
      const ids = [...operations.keys()].filter((id) => before === undefined || id < before).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
      return ids.slice(0, limit).map((id) => copy(operations.get(id)!));
    },
    async update(operation, expectedRevision) {
      const existing = operations.get(operation.id);
      if (!existing || existing.revision !== expectedRevision) return undefined;
      const record = { ...copy(operation), revision: expectedRevision + 1 };
      operations.set(record.id, record);
      return copy(record);
    },
    async delete(id) {
      return operations.delete(id);
    },
  };
}
