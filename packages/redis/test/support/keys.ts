import type { Redis } from 'ioredis';

/** Every key under `prefix`: run keys and global keys (test-only SCAN: the store itself never scans). */
export async function keysOf(client: Redis, prefix: string): Promise<string[]> {
  const found = new Set<string>();
  for (const pattern of [`${prefix}:*`, `{${prefix}}*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) found.add(key);
    } while (cursor !== '0');
  }
  return [...found].sort();
}
