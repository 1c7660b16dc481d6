import { createMemoryStore } from '@cairn/core';
import { countingStore } from '@cairn/core/backend';
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
        const counted = countingStore(inner, {
          history: false,
          around: (_call, forward, args) => {
            counter.hit();
            return forward(...args);
          },
        });
        const probe = new StoreProbe(counted, counter);
        return { probe, peer: async () => inner, close: async () => {} };
      },
      async close() {},
    };
  },
};
