import { createHash } from 'node:crypto';
import { sql } from 'kysely';

import { SignalListeners, type StoreSignals } from '@cairn/core/backend';
import type { Client as PgClient, ClientConfig } from 'pg';
import { guard } from '../context.js';
import type { AnyKysely } from '../dialect/types.js';

// Reconnection waits of the listening connection: doubling from 100 ms to 2 s.
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;
// PostgreSQL truncates identifiers (channel names among them) to 63 bytes.
const MAX_CHANNEL_BYTES = 63;
const CONNECT_TIMEOUT_MS = 10_000;

/** Options of `createPostgresSignals`. */
export interface PostgresSignalsOptions {
  /** Sends the notifications (`SELECT pg_notify(...)`): the store's Kysely instance, so a sender opens no connection of its own. */
  db: AnyKysely;
  /**
   * Where the listening connection goes: a connection string or a `pg` `ClientConfig` (a
   * `PoolConfig` works too). One dedicated connection per signals object, opened on the first
   * `listen` and closed when nothing listens any more.
   */
  connection: string | ClientConfig;
  /** The store's table prefix (default `cairn_`): channels are named after it, so stores on other prefixes hear nothing. */
  tablePrefix?: string;
}

/** `StoreSignals` over LISTEN/NOTIFY, with `close()` (which a store given it calls on its own `close()`). */
export interface PostgresSignals extends StoreSignals {
  /** Stops listening and ends the listening connection; idempotent. */
  close(): Promise<void>;
}

/** The channel of `topic` for a table prefix: `<prefix><topic>`, or a hash of it past 63 bytes. */
export function channelName(tablePrefix: string, topic: string): string {
  const name = `${tablePrefix}${topic}`;
  if (Buffer.byteLength(name) <= MAX_CHANNEL_BYTES) return name;
  return `cairn_${createHash('sha256').update(name).digest('hex').slice(0, 40)}`;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Wake-up signals for a PostgreSQL store (`WorkflowStore.signals`), over LISTEN/NOTIFY.
 *
 * Guarantees:
 * - `notify` is one `pg_notify` statement on the store's pool, in a transaction of its own that
 *   commits without waiting for a WAL flush (a signal need not survive a crash); a listener on the
 *   same database and table prefix, in any process, receives the message once it committed;
 * - listening uses one dedicated connection (not one of the pool's), with a permanent `'error'`
 *   listener: a server restart or a dropped connection never ends the process. The connection is
 *   re-established (waits doubling from 100 ms to 2 s, for as long as someone listens), every
 *   channel is listened to again, and every listener is then called once with no message, since
 *   messages sent meanwhile were lost; a listener's `onLost` is called as soon as the break is seen;
 * - `listen` rejects with `STORE_ERROR` when the connection cannot be opened at first.
 */
export function createPostgresSignals(options: PostgresSignalsOptions): PostgresSignals {
  const prefix = options.tablePrefix ?? 'cairn_';
  const config: ClientConfig = typeof options.connection === 'string' ? { connectionString: options.connection } : { ...options.connection };
  config.connectionTimeoutMillis ??= CONNECT_TIMEOUT_MS;
  config.keepAlive ??= true;
  const listeners = new SignalListeners();
  let client: PgClient | undefined;
  let connecting: Promise<PgClient> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const open = async (): Promise<PgClient> => {
    const { default: pg } = await import('pg');
    const next = new pg.Client(config);
    // Before connect: an error on a connection without a listener ends the process.
    next.on('error', () => lost(next));
    next.on('end', () => lost(next));
    next.on('notification', (notice) => listeners.deliver(notice.channel, notice.payload ?? ''));
    try {
      await next.connect();
      for (const channel of listeners.channels()) await next.query(`LISTEN ${quoteIdent(channel)}`);
    } catch (error) {
      next.removeAllListeners('end');
      await next.end().catch(() => undefined);
      throw error;
    }
    return next;
  };

  const connect = (): Promise<PgClient> => {
    if (client) return Promise.resolve(client);
    connecting ??= open().then(
      (opened) => {
        connecting = undefined;
        if (closed || listeners.empty) {
          void opened.end().catch(() => undefined);
          throw new Error('stopped listening');
        }
        client = opened;
        return opened;
      },
      (error: unknown) => {
        connecting = undefined;
        throw error;
      },
    );
    return connecting;
  };

  // The connection broke: reconnect while anyone listens, then tell every listener to look.
  const lost = (which: PgClient) => {
    if (client !== which) return;
    client = undefined;
    which.removeAllListeners('notification');
    void which.end().catch(() => undefined);
    // Messages are missed from now until the reconnection's deliver(): say so at once.
    listeners.lost();
    let wait = FIRST_RETRY_MS;
    const retry = () => {
      retryTimer = undefined;
      if (closed || listeners.empty || client) return;
      connect().then(
        () => listeners.deliver(),
        () => {
          if (closed || listeners.empty) return;
          wait = Math.min(wait * 2, MAX_RETRY_MS);
          retryTimer = setTimeout(retry, wait);
          retryTimer.unref?.();
        },
      );
    };
    retryTimer = setTimeout(retry, wait);
    retryTimer.unref?.();
  };

  return {
    notify: (topic, message) =>
      guard('signals.notify', async () => {
        // A NOTIFY takes a transaction id, so its commit waits for a WAL flush, and listeners hear
        // it only after that flush (an fsync on a durable server). The signal is a hint that no
        // crash needs to keep: its own one-statement transaction commits without waiting for the
        // flush (`set_config(..., true)`: for this transaction only). Nothing else is in it.
        await sql`select set_config('synchronous_commit', 'off', true), pg_notify(${channelName(prefix, topic)}, ${message})`.execute(options.db);
      }),

    listen: (topic, onSignal, onLost) =>
      guard('signals.listen', async () => {
        if (closed) throw new Error('the signals were closed');
        const channel = channelName(prefix, topic);
        const { first, remove } = listeners.add(channel, onSignal, onLost);
        try {
          const connected = client ?? (await connect());
          // LISTEN is idempotent (a connection opened just now listens already); if it fails, the
          // connection is broken and its replacement listens to every channel.
          if (first) await connected.query(`LISTEN ${quoteIdent(channel)}`).catch(() => undefined);
        } catch (error) {
          remove();
          throw error;
        }
        return async () => {
          const { channelEmpty, noneLeft } = remove();
          if (noneLeft) {
            // Nobody listens any more: hold no connection.
            const open = client;
            client = undefined;
            await open?.end().catch(() => undefined);
          } else if (channelEmpty) {
            await client?.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => undefined);
          }
        };
      }),

    async close() {
      if (closed) return;
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      listeners.clear();
      const open = client;
      client = undefined;
      await open?.end().catch(() => undefined);
    },
  };
}
