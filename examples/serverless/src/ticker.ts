// The tick pusher: what a platform's cron does (every minute there; every `everyMs` here): a signed
// POST of `{ kind: 'tick' }` to the push handler, which runs due work within its budget. An answer
// `continue` (the budget ran out with work left) is followed by another tick at once.
import { signPush } from '@cairn/http';

export interface Ticker {
  /** Ticks answered so far. */
  readonly ticks: number;
  stop(): Promise<void>;
}

export function startTicker(target: string, secret: string, everyMs: number): Ticker {
  let ticks = 0;
  let running: Promise<void> | undefined;
  const tick = async () => {
    for (let again = true; again; ) {
      const body = JSON.stringify({ kind: 'tick' });
      const response = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json', ...signPush(body, secret) }, body });
      const answer = (await response.json()) as { status?: string };
      ticks++;
      again = response.ok && answer.status === 'continue';
    }
  };
  const timer = setInterval(() => {
    // One tick at a time, as a cron with a short period should be configured.
    running ??= tick()
      .catch((error: unknown) => console.error('tick failed:', error))
      .finally(() => {
        running = undefined;
      });
  }, everyMs);
  return {
    get ticks() {
      return ticks;
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
