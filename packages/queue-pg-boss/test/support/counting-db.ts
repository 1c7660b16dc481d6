import pg from 'pg';

/** The `db` adapter shape pg-boss accepts (`bossOptions.db`), with the LISTEN the adapter uses. */
export interface CountingDb {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  listen(channel: string, onNotification: (payload: string) => void, onReconnect: () => void): Promise<{ close(): Promise<void> }>;
}

/** A counting `db` and what it saw since the last `reset()`. */
export interface CountingDbHandle {
  db: CountingDb;
  /** pg-boss's job fetches (its `WITH next AS (...)` statement). */
  fetches(): number;
  /** The text of every statement sent, in order. */
  statements(): string[];
  reset(): void;
  close(): Promise<void>;
}

/**
 * A pg-boss `db` over a real pool that records every statement pg-boss and the adapter send through
 * it, so a test can say how often idle workers poll and what else a process sends.
 */
export function countingDb(url: string): CountingDbHandle {
  const pool = new pg.Pool({ connectionString: url, max: 20 });
  pool.on('error', () => {});
  const listeners: pg.Client[] = [];
  let statements: string[] = [];
  return {
    db: {
      async executeSql(text, values) {
        statements.push(text);
        return pool.query(text, values as unknown[]);
      },
      // A real LISTEN on a connection of its own, as pg-boss's built-in db does (without its reconnection).
      async listen(channel, onNotification, onReconnect) {
        const client = new pg.Client({ connectionString: url });
        client.on('error', () => {});
        client.on('notification', (message) => {
          if (message.payload !== undefined) onNotification(message.payload);
        });
        await client.connect();
        await client.query(`LISTEN "${channel}"`);
        listeners.push(client);
        onReconnect();
        return { close: () => client.end() };
      },
    },
    fetches: () => statements.filter((text) => /WITH\s+next\s+AS/i.test(text)).length,
    statements: () => [...statements],
    reset: () => void (statements = []),
    close: async () => {
      await Promise.all(listeners.map((client) => client.end().catch(() => undefined)));
      await pool.end();
    },
  };
}
