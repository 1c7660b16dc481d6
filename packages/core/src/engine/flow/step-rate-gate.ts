import type { EngineRuntime } from '../engine-runtime.js';
import type { CheckedRate } from './flow-options.js';
import { uuidv7 } from '../uuid.js';

/** A step's rate limit, checked (`checkStepRateLimit`): its slot key, limit and period. */
export type StepRate = CheckedRate & { key: string };

/**
 * Takes one slot of a step rate limit before an attempt's body runs. Each take is its own holder
 * (never released: the slot frees itself after the period). A refusal whose next free slot comes
 * within `timings.inlineRetryMaxMs` is waited out here and asked again; a later one resolves with
 * the time to wake at, for the caller to suspend the run until then (holding no worker). Takes
 * do not queue: when several wait, whichever asks first after a slot frees gets it.
 */
export async function takeStepSlot(rt: EngineRuntime, runId: string, rate: StepRate, signal: AbortSignal): Promise<{ wakeAt?: number }> {
  const slots = rt.store.slots;
  if (slots === undefined) return {};
  for (;;) {
    const now = rt.clock.now();
    const grant = await slots.acquire({ key: rate.key, limit: rate.limit, holder: `${runId}:${uuidv7(now)}`, expiresAt: now + rate.periodMs }, now);
    if (grant.acquired) return {};
    // Refused without `freeAt` only when a slot freed meanwhile: ask again soon.
    const wakeAt = Math.max(now + 1, grant.freeAt ?? now + 1);
    if (wakeAt - now > rt.timings.inlineRetryMaxMs) return { wakeAt };
    await rt.clock.sleep(wakeAt - now, signal);
  }
}
