import type { Clock } from '../../clock/clock.js';

/**
 * A reader's wake-ups (`engine.readStream`, `engine.request`): store signals for its run (or a lost
 * signal), its poll, an abort. A signal that comes while the reader is not waiting is kept for its
 * next wait.
 */
export class Wakeup {
  private poke: (() => void) | undefined;
  private pending = false;

  signal(): void {
    this.pending = true;
    this.poke?.();
  }

  /** Resolves on the next signal since the last call, after `ms`, or on abort. */
  async wait(clock: Clock, ms: number, abort: AbortSignal | undefined): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return;
    }
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    abort?.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.race([
        new Promise<void>((resolve) => {
          this.poke = resolve;
        }),
        clock.sleep(ms, controller.signal).catch(() => {}),
      ]);
    } finally {
      this.poke = undefined;
      this.pending = false;
      abort?.removeEventListener('abort', onAbort);
      controller.abort();
    }
  }
}
