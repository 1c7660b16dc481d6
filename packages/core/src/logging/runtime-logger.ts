import type { EngineLogger, LogLevel, LogMethod } from './engine-logger.js';
import { fromStringLogger } from './from-string-logger.js';

/** The engine's logger as its parts use it: every level callable, and a cheap enabled check. */
export interface RuntimeLogger {
  readonly debug: LogMethod;
  readonly info: LogMethod;
  readonly warn: LogMethod;
  readonly error: LogMethod;
  /** False when an entry at `level` would be dropped: the caller builds nothing then. */
  enabled(level: LogLevel): boolean;
  /** `createEngine({ logPayloads })`: inputs, outputs, event payloads and state values may be logged. */
  readonly payloads: boolean;
}

/** The default: warnings and errors to the console, as `[cairn] message` followed by the data. */
export const consoleLogger: EngineLogger = fromStringLogger(console, { level: 'warn', prefix: '[cairn] ' });

const noop: LogMethod = () => {};

/** Normalises a user's `EngineLogger` (missing levels dropped, methods bound to it). */
export function toRuntimeLogger(logger: EngineLogger, payloads: boolean): RuntimeLogger {
  const bind = (level: LogLevel): LogMethod => {
    const method = logger[level];
    return typeof method === 'function' ? method.bind(logger) : noop;
  };
  const methods = { debug: bind('debug'), info: bind('info'), warn: bind('warn'), error: bind('error') };
  const check = typeof logger.isLevelEnabled === 'function' ? logger.isLevelEnabled.bind(logger) : undefined;
  return {
    ...methods,
    enabled: (level) => methods[level] !== noop && (check === undefined || check(level)),
    payloads,
  };
}
