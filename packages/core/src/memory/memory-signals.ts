import { SignalListeners } from '../store/signal-listeners.js';
import type { StoreSignals } from '../store/workflow-store.js';

/**
 * Wake-up signals within one process: what `createMemoryStore` carries, so that several engines
 * on one memory store (tests, a process with an API engine and a worker engine) hand each other
 * runs as processes on a database do. A message is delivered to the topic's listeners from a later
 * macrotask (never inside `notify`), to the listeners of the moment it was sent that are still
 * listening then.
 */
export function createMemorySignals(): StoreSignals {
  const listeners = new SignalListeners();
  return {
    async notify(topic, message) {
      // Like a server: to the listeners of the moment, from a later macrotask.
      const deliver = listeners.deliverLater(topic);
      setImmediate(() => deliver(message));
    },
    // Within one process nothing breaks: `onLost` is never called.
    async listen(topic, onSignal) {
      const { remove } = listeners.add(topic, onSignal);
      return async () => void remove();
    },
  };
}
