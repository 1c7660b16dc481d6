import type { EngineLogger, LogData, LogLevel } from './engine-logger.js';

/** A logger whose methods take the message first and the data second (console, winston). */
export interface StringFirstLogger {
  debug?(message: string, data?: LogData): void;
  info?(message: string, data?: LogData): void;
  warn(message: string, data?: LogData): void;
  error(message: string, data?: LogData): void;
}

/** Options of `fromStringLogger`. */
export interface StringLoggerOptions {
  /** The least severe level written (default `info`): `debug` entries are dropped unless this is `debug`. */
  level?: LogLevel;
  /** Put before every message, e.g. `'[cairn] '` (default none). */
  prefix?: string;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/**
 * Adapts a string-first logger (`console`, winston) to the engine's object-first `EngineLogger`:
 * each entry is passed on as `target[level](prefix + message, data)`, for levels at or above
 * `level` (default `info`). A level the target lacks falls back to `warn` for `info`, and is
 * dropped for `debug`.
 *
 * @example createEngine({ store, workflows, logger: fromStringLogger(console, { level: 'debug' }) })
 * @example createEngine({ store, workflows, logger: fromStringLogger(winstonLogger) })
 */
export function fromStringLogger(target: StringFirstLogger, options: StringLoggerOptions = {}): EngineLogger {
  const least = RANK[options.level ?? 'info'];
  if (least === undefined) throw new TypeError(`fromStringLogger: unknown level ${String(options.level)}`);
  const prefix = options.prefix ?? '';
  const write = (level: LogLevel) => {
    // Bound once, so the target's own `this` (a winston logger's) is kept.
    const method = level === 'debug' ? target.debug : level === 'info' ? (target.info ?? target.warn) : target[level];
    if (RANK[level] < least || method === undefined) return undefined;
    return (data: LogData, message: string) => method.call(target, prefix + message, data);
  };
  const logger: EngineLogger = {
    warn: write('warn') ?? (() => {}),
    error: write('error') ?? (() => {}),
    isLevelEnabled: (level) => RANK[level] >= least && (level !== 'debug' || target.debug !== undefined),
  };
  const debug = write('debug');
  const info = write('info');
  if (debug) logger.debug = debug;
  if (info) logger.info = info;
  return logger;
}
