/**
 * The adapter's default error output: during an outage pg-boss emits an `error` event for every
 * failed poll, heartbeat and maintenance query of every worker (hundreds in a few seconds). This
 * prints each cause once, counts the repeats, and prints one line when pg-boss works again.
 */
export interface OutageLog {
  /** An `error` event of pg-boss: printed if its cause is new in this outage, counted otherwise. */
  report(error: unknown): void;
  /** A pg-boss call succeeded: ends an open outage with one line. */
  recovered(): void;
}

/**
 * The cause of an error, for "same cause" comparisons: its driver code (`57P01`, `ECONNREFUSED`)
 * or else its message without the queue/worker suffix pg-boss appends.
 */
function causeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/ \(Queue: .*\)$/, '');
}

export function createOutageLog(write: (...args: unknown[]) => void, now: () => number = Date.now): OutageLog {
  const seen = new Set<string>();
  let since: number | undefined;
  let repeats = 0;
  return {
    report(error) {
      since ??= now();
      const cause = causeOf(error);
      if (seen.has(cause)) {
        repeats++;
        return;
      }
      seen.add(cause);
      write(`[cairn/queue-pg-boss] pg-boss error (further errors with this cause are not logged until pg-boss works again):`, error);
    },
    recovered() {
      if (since === undefined) return;
      write(`[cairn/queue-pg-boss] pg-boss works again after ${((now() - since) / 1000).toFixed(1)} s of errors (${repeats} more with the same causes were not logged)`);
      since = undefined;
      seen.clear();
      repeats = 0;
    },
  };
}
