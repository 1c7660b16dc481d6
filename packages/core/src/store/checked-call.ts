/**
 * Runs `check`, then `call`; a failed check becomes a rejected promise and `call` never runs. Not
 * an async function, so a checked call takes no more event-loop turns than the backend's own
 * (timing tests rely on it).
 */
export function checkedCall<R>(check: () => void, call: () => Promise<R>): Promise<R> {
  try {
    check();
  } catch (error) {
    return Promise.reject(error);
  }
  return call();
}
