import { createMemoryStore } from '@cairn/core';
import { StoreProbe } from '../instrument/counting-store.js';
import { RoundTripCounter } from '../instrument/round-trips.js';
import type { BackendAdapter, BackendInstance } from './types.js';

/**
 * The in-memory reference store. It has no driver: every store call counts as one "round trip",
 * which makes its numbers the engine's own cost with no I/O at all.
 */
export const memoryBackend: BackendAdapter = {
  name: 'memory',
  title: 'memory',
  async setup(): Promise<BackendInstance> {
    const counter = new RoundTripCounter();
    return {
      name: 'memory',
      title: 'memory',
      server: 'in-process (@cairn/core createMemoryStore)',
      driverCounted: false,
      counter,
      async openStore() {
        const inner = createMemoryStore();
        // Count each store call as one request, attributed like a driver round trip.
        const counted = new Proxy(inner, {
          get(target, noun, receiver) {
            const value = Reflect.get(target, noun, receiver) as unknown;
            if (typeof noun !== 'string' || typeof value !== 'object' || value === null) return value;
            return new Proxy(value, {
              get(obj, prop, r) {
                const fn = Reflect.get(obj, prop, r) as unknown;
                if (typeof fn !== 'function') return fn;
                return (...args: unknown[]) => {
                  counter.hit();
                  return (fn as (...a: unknown[]) => unknown).apply(obj, args);
                };
              },
            });
          },
        });
        const probe = new StoreProbe(counted, counter);
        return { probe, peer: async () => inner, close: async () => {} };
      },
      async close() {},
    };
  },
};
