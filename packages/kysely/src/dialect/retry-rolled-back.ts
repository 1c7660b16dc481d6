/** How many times a unit the server rolled back is tried in all (the first try included). */
const TRIES = 4;

/**
 * Runs `fn`, and runs it again when it failed with an error after which the server has rolled the
 * whole unit back (a deadlock victim, a serialization failure), so nothing of the failed try
 * remains and the retry cannot apply anything twice. Waits a few jittered milliseconds between
 * tries so the contenders do not collide again in lockstep. Any other error, or the last one,
 * propagates.
 */
export async function retryRolledBack<T>(isRolledBack: (error: unknown) => boolean, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= TRIES || !isRolledBack(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * 2 + Math.random() * 5));
    }
  }
}
