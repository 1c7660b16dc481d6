import type { Redis } from 'ioredis';

/**
 * Makes the client drop the given scripts, as if the process had died right after the run write
 * (before its index write). Returns a function that heals it.
 */
export function crashBefore(client: Redis, shas: string[]): () => void {
  const original = client.call.bind(client) as (...args: unknown[]) => Promise<unknown>;
  (client as unknown as { call: (...args: unknown[]) => Promise<unknown> }).call = (...args: unknown[]) => {
    if (args[0] === 'EVALSHA' && shas.includes(String(args[1]))) return Promise.reject(new Error('simulated crash'));
    return original(...args);
  };
  return () => {
    (client as unknown as { call: typeof original }).call = original;
  };
}
