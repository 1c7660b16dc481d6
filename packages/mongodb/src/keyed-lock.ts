/**
 * Serialises async work per key inside this process: work for one key runs one at a time, in call
 * order; work for different keys runs concurrently. Used only where the server does not make a
 * conditional update atomic (FerretDB v1; see `docs/backends/mongodb.md`).
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `fn` after every earlier `run` of the same key has settled. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(fn);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** How many keys currently have work queued or running. */
  get size(): number {
    return this.#tails.size;
  }
}
