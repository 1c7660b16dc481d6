/**
 * Logging an outage once per cause. During an outage of a database or Redis, drivers and queue
 * libraries report an error for every failed call, poll, heartbeat and reconnection — hundreds in
 * a few seconds. What an operator needs is each distinct cause once, and when it ended.
 */

/**
 * What makes two errors "the same cause": the innermost `cause`'s own `code` (`ECONNREFUSED`,
 * `57P01`, `PROTOCOL_CONNECTION_LOST`), or else its message with numbers blanked (ports, job ids)
 * and a trailing parenthetical dropped (pg-boss appends the queue and worker there). The outer
 * messages, which name the failed operation, are ignored.
 */
export function errorCause(error: unknown): string {
  let inner: unknown = error;
  for (let depth = 0; depth < 10 && inner instanceof Error && inner.cause !== undefined; depth++) inner = inner.cause;
  const code = (inner as { code?: unknown } | null)?.code;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  const message = inner instanceof Error ? inner.message : String(inner);
  return message.replace(/ \([^()]*\)$/, '').replace(/\d+/g, '#');
}

/**
 * How long after its last error an outage can be declared over. Work that began during the outage
 * keeps failing for a moment after the first success (a late reply, a job whose lock expired);
 * those errors belong to the same outage instead of opening a new one.
 */
export const OUTAGE_QUIET_MS = 1000;

/** Logs errors once per cause while an outage lasts; see `createOutageLog`. */
export interface OutageLog {
  /** Writes `error` (with `message`) if its cause is new in the current outage; counts it otherwise. */
  report(error: unknown, message?: string): void;
  /**
   * Something worked again: ends an open outage with one line (how long, how many repeats were not
   * written), once no error has come for `OUTAGE_QUIET_MS`; until then the outage stays open.
   */
  recovered(): void;
}

/**
 * An `OutageLog` writing through `write` (for example `console.error`), each line starting with
 * `label`. The first error opens an outage; `recovered()` closes it (once errors have stopped
 * for `OUTAGE_QUIET_MS`), after which every cause is new again.
 */
export function createOutageLog(label: string, write: (line: string, error?: unknown) => void, now: () => number = Date.now): OutageLog {
  const seen = new Set<string>();
  let since: number | undefined;
  let lastError = 0;
  let repeats = 0;
  return {
    report(error, message = 'error') {
      since ??= now();
      lastError = now();
      const cause = errorCause(error);
      if (seen.has(cause)) {
        repeats++;
        return;
      }
      seen.add(cause);
      write(`${label} ${message} (further errors with this cause are not logged until it works again):`, error);
    },
    recovered() {
      if (since === undefined || now() - lastError < OUTAGE_QUIET_MS) return;
      write(`${label} works again after ${((now() - since) / 1000).toFixed(1)} s of errors (${repeats} more with the same causes were not logged)`);
      since = undefined;
      seen.clear();
      repeats = 0;
    },
  };
}
