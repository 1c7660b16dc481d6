/** The levels the engine logs at, least to most severe. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * What a log entry carries besides its message: `runId`, `workflow`, `stepKey`, `err` (an
 * `Error` passed as it is, under pino's and Bunyan's key, so their serialisers keep its type, message and stack) and the like. Never an
 * input, output, event payload or state value unless the engine was created with
 * `logPayloads: true`.
 */
export type LogData = Record<string, unknown>;

/** One level of an `EngineLogger`: the data object first, then the message (pino, Bunyan). */
export type LogMethod = (data: LogData, message: string) => void;

/**
 * Where the engine reports what it cannot throw to a caller (background executions, recovery,
 * outages) and, at `info` and `debug`, what happens to runs and steps. The call shape is pino's
 * and Bunyan's, object first: `logger.warn({ runId, err }, 'message')`, so a pino or Bunyan
 * logger (or a child of one) can be passed as it is. A string-first logger (console, winston)
 * goes through `fromStringLogger`.
 *
 * `debug` and `info` may be left out: those levels are then dropped. `isLevelEnabled` (pino has
 * it) lets the engine skip building entries for a disabled level; without it, every level that
 * has a method counts as enabled.
 */
export interface EngineLogger {
  debug?: LogMethod;
  info?: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  isLevelEnabled?: (level: LogLevel) => boolean;
}
