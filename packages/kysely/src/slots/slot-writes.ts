import type { SlotGrant, SlotRequest } from '@cairn/core/backend';

/** The two slot calls whose SQL differs by dialect (`renew` and `inspect` are shared statements). */
export interface SlotWrites {
  /** `SlotStore.acquire`, atomic per key. */
  acquire(request: SlotRequest, now: number): Promise<SlotGrant>;
  /** `SlotStore.release`, atomic per key. */
  release(key: string, holder: string, now: number): Promise<string | undefined>;
}
