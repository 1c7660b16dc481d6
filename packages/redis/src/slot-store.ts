import type { SlotSnapshot, SlotStore, SlotWait } from '@cairn/core/backend';
import type { StoreContext } from './context.js';

// 2^53: queuedAt is offset by it so every safe integer (negative ones too) is a 17-digit number.
const QUEUED_OFFSET = 2n ** 53n;
// Where the holder starts in a line member: rank (4 digits) + queuedAt (17 digits), all ASCII.
const HOLDER_START = 21;

/** A waiter's member of the line sorted set: its lexical order is the line order. */
const lineMember = (wait: SlotWait, holder: string): string => {
  // withArgumentChecks let through only an integer priority in -1000..1000 and integer times.
  const rank = String(1000 - wait.priority).padStart(4, '0');
  return `${rank}${(BigInt(wait.queuedAt) + QUEUED_OFFSET).toString().padStart(17, '0')}${holder}`;
};

const waiterOf = (member: string, expiresAt: string): SlotSnapshot['waiters'][number] => ({
  holder: member.slice(HOLDER_START),
  priority: 1000 - Number(member.slice(0, 4)),
  queuedAt: Number(BigInt(member.slice(4, HOLDER_START)) - QUEUED_OFFSET),
  expiresAt: Number(expiresAt),
});

const flat = (reply: unknown): string[] => (Array.isArray(reply) ? reply.map(String) : []);

/**
 * The `slots` part: four keys per slot key under its own hash tag (see `slot-scripts.lua.ts`),
 * each method one Lua script, so every guarantee of `SlotStore` holds atomically per key, on a
 * single server and on Redis Cluster alike. The line order is exact: a line member sorts by its
 * bytes, and the holder's UTF-8 bytes sort by code point, the contract's holder order.
 */
export function createSlotStore(ctx: StoreContext): SlotStore {
  const keysOf = (key: string): string[] => {
    const base = ctx.keys.slot(key);
    return [`${base}:held`, `${base}:line`, `${base}:lapse`, `${base}:waiters`];
  };
  return {
    async acquire(request, now) {
      const { holder, wait } = request;
      const args = [
        holder,
        String(request.limit),
        String(request.expiresAt),
        String(now),
        wait ? lineMember(wait, holder) : '',
        wait ? String(wait.expiresAt) : '',
      ];
      const reply = flat(await ctx.caller.script(ctx.scripts.acquireSlot, keysOf(request.key), args));
      if (reply[0] === '1') return { acquired: true };
      return reply[1] === undefined ? { acquired: false } : { acquired: false, freeAt: Number(reply[1]) };
    },
    async renew(key, holder, expiresAt, _now) {
      return Number(await ctx.caller.script(ctx.scripts.renewSlot, keysOf(key), [holder, String(expiresAt)])) === 1;
    },
    async release(key, holder, now) {
      const first = await ctx.caller.script(ctx.scripts.releaseSlot, keysOf(key), [holder, String(now)]);
      return typeof first === 'string' ? first.slice(HOLDER_START) : undefined;
    },
    async inspect(key, now) {
      const [held, line] = (await ctx.caller.script(ctx.scripts.inspectSlot, keysOf(key), [String(now)])) as [unknown, unknown];
      const h = flat(held);
      const l = flat(line);
      const snapshot: SlotSnapshot = { holders: [], waiters: [] };
      for (let i = 0; i + 1 < h.length; i += 2) snapshot.holders.push({ holder: h[i]!, expiresAt: Number(h[i + 1]) });
      for (let i = 0; i + 1 < l.length; i += 2) snapshot.waiters.push(waiterOf(l[i]!, l[i + 1]!));
      return snapshot;
    },
  };
}
