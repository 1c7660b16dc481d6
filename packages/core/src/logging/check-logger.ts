import { invalidInput } from '../errors/invalid-input.js';
import type { EngineLogger } from './engine-logger.js';

/** `createEngine({ logger })`: undefined, or an object with `warn` and `error` functions (INVALID_INPUT otherwise). */
export function checkLogger(value: unknown): EngineLogger | undefined {
  if (value === undefined) return undefined;
  const logger = value as Partial<EngineLogger> | null;
  if (typeof logger !== 'object' || logger === null || typeof logger.warn !== 'function' || typeof logger.error !== 'function') {
    throw invalidInput(
      'createEngine logger',
      'must be an object with warn and error methods (object first: pino, Bunyan; wrap console or winston in fromStringLogger)',
      value,
    );
  }
  return logger as EngineLogger;
}
