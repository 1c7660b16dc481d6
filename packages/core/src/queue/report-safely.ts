/**
 * Hands `args` to a user's error hook (`onError`), containing whatever the hook throws: a failing
 * hook must not take a worker down with it.
 */
export function reportSafely<A extends unknown[]>(hook: (...args: A) => void, ...args: A): void {
  try {
    hook(...args);
  } catch {
    // Nothing to report it to: the hook was the place errors go.
  }
}
