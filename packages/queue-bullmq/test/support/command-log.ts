import { Redis } from 'ioredis';

/** Commands Redis executed on keys under one prefix, by command name. */
export interface CommandLog {
  /**
   * How many commands named `name` (lowercase) touched a key under the prefix so far, of those
   * whose arguments (the name first) pass `where` when given.
   */
  count(name: string, where?: (args: readonly string[]) => boolean): number;
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
  const seen: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (!args.some((arg) => arg.startsWith(`${prefix}:`))) return;
    seen.push([String(args[0]).toLowerCase(), ...args.slice(1).map(String)]);
  });
  return {
    count: (name, where) => seen.filter((args) => args[0] === name && (where === undefined || where(args))).length,
    async close() {
      monitor.disconnect();
      await client.quit().catch(() => client.disconnect());
    },
  };
}
