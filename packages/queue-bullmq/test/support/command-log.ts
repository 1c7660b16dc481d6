import { Redis } from 'ioredis';

/** Commands Redis executed on keys under one prefix, by command name. */
export interface CommandLog {
  /** How many commands named `name` (lowercase) touched a key under the prefix so far. */
  count(name: string): number;
  close(): Promise<void>;
}

/**
 * Counts, through MONITOR, the commands Redis executes on keys under `prefix` — those a Lua script
 * runs included (MONITOR shows them), so a BullMQ fetch shows as its `rpoplpush`. Counting by key
 * rather than with INFO commandstats keeps other clients of a shared server out of the figures.
 */
export async function openCommandLog(url: string, prefix: string): Promise<CommandLog> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  const monitor = await client.monitor();
  const counts = new Map<string, number>();
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (!args.some((arg) => arg.startsWith(`${prefix}:`))) return;
    const name = String(args[0]).toLowerCase();
    counts.set(name, (counts.get(name) ?? 0) + 1);
  });
  return {
    count: (name) => counts.get(name) ?? 0,
    async close() {
      monitor.disconnect();
      await client.quit().catch(() => client.disconnect());
    },
  };
}
