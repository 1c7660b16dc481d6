import { randomBytes } from 'node:crypto';

/** A fresh namespace: lowercase letters, digits and `_`, 20 characters, unique per case. */
export function newNamespace(): string {
  return `cf_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** What a case body gets from `runInFreshNamespace`: the namespace, its store or queue, peers, cleanups. */
export interface CaseScope<R> {
  /** The fresh namespace, unique to this case. */
  namespace: string;
  /** The store or queue opened on `namespace` for the case. */
  resource: R;
  /** Opens another instance on `namespace`; it is closed when the case ends. */
  openPeer(): Promise<R>;
  /** Runs `fn` when the case ends, before the peers are closed (last registered runs first). */
  defer(fn: () => Promise<void> | void): void;
}

/**
 * Runs one conformance case on a fresh namespace: opens a store or queue there with `open`, runs
 * `body`, then, whatever happened, the deferred cleanups (last first), `close()` on every peer,
 * and `destroy` on the first instance. Returns what `body` returned; throws the body's error, or
 * else the first cleanup error. If `open` itself fails there is nothing to clean up.
 */
export async function runInFreshNamespace<R extends { close(): Promise<void> }, T>(
  open: (namespace: string) => Promise<R>,
  destroy: (resource: R, namespace: string) => Promise<void> | void,
  body: (scope: CaseScope<R>) => Promise<T>,
): Promise<T> {
  const namespace = newNamespace();
  const resource = await open(namespace);
  const peers: R[] = [];
  const deferred: Array<() => Promise<void> | void> = [];
  const scope: CaseScope<R> = {
    namespace,
    resource,
    openPeer: async () => {
      const peer = await open(namespace);
      peers.push(peer);
      return peer;
    },
    defer: (fn) => void deferred.push(fn),
  };
  let value: T | undefined;
  let failure: { error: unknown } | undefined;
  try {
    value = await body(scope);
  } catch (error) {
    failure = { error };
  }
  // Cleanup always runs, and a cleanup error never hides the case's own failure.
  const cleanups = [...deferred.reverse(), ...peers.map((p) => () => p.close()), () => destroy(resource, namespace)];
  for (const cleanup of cleanups) {
    try {
      await cleanup();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
  return value as T;
}
