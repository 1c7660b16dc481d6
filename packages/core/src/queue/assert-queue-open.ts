import { CairnError } from '../errors/cairn-error.js';

/**
 * Refuses an operation on a closed queue adapter: `ENGINE_STOPPED`, `<label> queue "<name>" is
 * closed; <operation>() is no longer accepted`, when `closing` is set (the adapter's close promise).
 */
export function assertQueueOpen(closing: unknown, label: string, name: string, operation: string): void {
  if (closing !== undefined) {
    throw new CairnError('ENGINE_STOPPED', `${label} queue "${name}" is closed; ${operation}() is no longer accepted`);
  }
}
