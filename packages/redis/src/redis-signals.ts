import { SignalListeners, type StoreSignals } from '@cairn/core/backend';
import { storeError, type RedisClient } from './client.js';

/** `StoreSignals` over Redis pub/sub, with `close()` (called by the store's own `close()`). */
export interface RedisSignals extends StoreSignals {
  /** Quits the subscriber connection, if one was opened; idempotent. */
  close(): Promise<void>;
}

/**
 * Wake-up signals of a Redis store over pub/sub, on channels `<prefix>:signals:<topic>`.
 *
 * Guarantees:
 * - `notify` is one `PUBLISH` on the store's client; every subscriber of the channel on the same
 *   server (or cluster) receives it;
 * - listening uses one subscriber connection, `redis.duplicate()`, opened on the first `listen`
 *   and quit when nothing listens any more; it has its own `'error'` listener, so a server restart
 *   never ends the process; ioredis reconnects and subscribes again on its own, and every listener
 *   is then called once with no message, since messages published meanwhile were lost; a
 *   listener's `onLost` is called as soon as the connection closes.
 */
export function createRedisSignals(redis: RedisClient, prefix: string): RedisSignals {
  const channelOf = (topic: string) => `${prefix}:signals:${topic}`;
  const listeners = new SignalListeners();
  let subscriber: RedisClient | undefined;
  let closed = false;

  const open = (): RedisClient => {
    const next = (redis as { duplicate(): RedisClient }).duplicate();
    next.on('error', () => {});
    next.on('message', (channel: string, message: string) => listeners.deliver(channel, message));
    let readyOnce = false;
    let up = false;
    // 'ready' again after the first: the connection came back (and ioredis resubscribed).
    next.on('ready', () => {
      up = true;
      if (readyOnce) listeners.deliver();
      readyOnce = true;
    });
    // The connection broke (ioredis reconnects on its own): messages are missed until 'ready'.
    next.on('close', () => {
      if (!up) return;
      up = false;
      listeners.lost();
    });
    return next;
  };

  return {
    async notify(topic, message) {
      try {
        await redis.publish(channelOf(topic), message);
      } catch (error) {
        throw storeError('signals.notify', error);
      }
    },

    async listen(topic, onSignal, onLost) {
      if (closed) throw storeError('signals.listen', new Error('the store was closed'));
      const channel = channelOf(topic);
      const { first, remove } = listeners.add(channel, onSignal, onLost);
      subscriber ??= open();
      try {
        if (first) await subscriber.subscribe(channel);
      } catch (error) {
        remove();
        throw storeError('signals.listen', error);
      }
      return async () => {
        const { channelEmpty, noneLeft } = remove();
        if (noneLeft) {
          // Nobody listens any more: hold no connection.
          const open = subscriber;
          subscriber = undefined;
          open?.disconnect();
        } else if (channelEmpty) {
          await subscriber?.unsubscribe(channel).catch(() => undefined);
        }
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      const open = subscriber;
      subscriber = undefined;
      open?.disconnect();
    },
  };
}
