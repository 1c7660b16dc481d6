import type { SlotGrant, SlotRequest, SlotSnapshot, SlotWait } from '../model/slot.js';
import type { SlotStore } from '../store/workflow-store.js';
import { compareCodePoints } from '../store/compare-code-points.js';

interface KeySlots {
  /**
   * Holder → `expiresAt`, expired slots included: an expired slot stays its holder's (so `renew`
   * still finds it) until a newcomer needs it, as a backend's slot row keeps its holder until a
   * conditional update takes it over.
   */
  holders: Map<string, number>;
  waiters: Map<string, SlotWait>;
}

type Waiter = SlotWait & { holder: string };

/** Line order: `priority` desc, `queuedAt` asc, `holder` asc (by code point, as UTF-8 bytes sort). */
const inLine = (a: Waiter, b: Waiter): number => b.priority - a.priority || a.queuedAt - b.queuedAt || compareCodePoints(a.holder, b.holder);

/** A key's live waiters, first in line first. */
const line = (slots: KeySlots, now: number): Waiter[] =>
  [...slots.waiters]
    .filter(([, wait]) => wait.expiresAt > now)
    .map(([holder, wait]) => ({ holder, ...wait }))
    .sort(inLine);

/** When each live holder of a key expires. */
const held = (slots: KeySlots, now: number): number[] => [...slots.holders.values()].filter((expiresAt) => expiresAt > now);

/**
 * The memory store's `SlotStore`. Every method runs synchronously between awaits, so each is one
 * atomic unit. A key's entry is dropped once it has neither holders nor waiters; expired holders
 * stay (at most `limit` per key) until taken over or released, since `renew` must still find them.
 */
export function createMemorySlots(): SlotStore {
  const keys = new Map<string, KeySlots>();

  const slotsOf = (key: string): KeySlots => {
    let slots = keys.get(key);
    if (!slots) keys.set(key, (slots = { holders: new Map(), waiters: new Map() }));
    return slots;
  };

  // Expired entries are kept only while they matter (an expired holder can renew); an empty key goes.
  const tidy = (key: string, slots: KeySlots, now: number): void => {
    for (const [holder, wait] of slots.waiters) if (wait.expiresAt <= now) slots.waiters.delete(holder);
    if (slots.holders.size === 0 && slots.waiters.size === 0) keys.delete(key);
  };

  return {
    async acquire(request: SlotRequest, now: number): Promise<SlotGrant> {
      const { key, limit, holder, expiresAt, wait } = request;
      const slots = slotsOf(key);
      const stored = slots.holders.get(holder);
      if (stored !== undefined) {
        slots.holders.set(holder, Math.max(stored, expiresAt));
        slots.waiters.delete(holder);
        return { acquired: true };
      }
      const live = held(slots, now);
      const free = limit - live.length;
      const ahead = wait === undefined ? 0 : line(slots, now).filter((w) => w.holder !== holder && inLine(w, { holder, ...wait }) < 0).length;
      if (free > 0 && free > ahead) {
        if (slots.holders.size >= limit) {
          // Every slot has a holder: take over the expired one that expired first.
          let oldest: [string, number] | undefined;
          for (const entry of slots.holders) if (entry[1] <= now && (oldest === undefined || entry[1] < oldest[1])) oldest = entry;
          if (oldest !== undefined) slots.holders.delete(oldest[0]);
        }
        slots.holders.set(holder, expiresAt);
        slots.waiters.delete(holder);
        tidy(key, slots, now);
        return { acquired: true };
      }
      if (wait !== undefined) slots.waiters.set(holder, { priority: wait.priority, queuedAt: wait.queuedAt, expiresAt: wait.expiresAt });
      tidy(key, slots, now);
      return free > 0 ? { acquired: false } : { acquired: false, freeAt: Math.min(...live) };
    },

    async renew(key, holder, expiresAt, now) {
      const slots = keys.get(key);
      const stored = slots?.holders.get(holder);
      if (slots === undefined || stored === undefined) return false;
      slots.holders.set(holder, Math.max(stored, expiresAt));
      tidy(key, slots, now);
      return true;
    },

    async release(key, holder, now) {
      const slots = keys.get(key);
      if (slots === undefined) return undefined;
      slots.holders.delete(holder);
      slots.waiters.delete(holder);
      tidy(key, slots, now);
      return line(slots, now)[0]?.holder;
    },

    async inspect(key, now): Promise<SlotSnapshot> {
      const slots = keys.get(key);
      if (slots === undefined) return { holders: [], waiters: [] };
      return {
        holders: [...slots.holders].filter(([, expiresAt]) => expiresAt > now).map(([holder, expiresAt]) => ({ holder, expiresAt })),
        waiters: line(slots, now),
      };
    },
  };
}
