import type { Redis } from 'ioredis';
import { uuidv7 } from '@cairn/core/backend';
import type { Templates } from './sql-loader.js';
import { STATUS_MIX, statusOf, WORKFLOW_COUNT } from './scale-workflows.js';

type KeyCopy =
  | { type: 'hash'; key: string; value: Record<string, string> }
  | { type: 'set'; key: string; value: string[] }
  | { type: 'list'; key: string; value: string[] }
  | { type: 'zset'; key: string; value: Array<[string, number]> };

/** One template run as Redis holds it: its own keys, and its entries in the global indexes. */
interface RedisTemplate {
  id: string;
  createdAt: number;
  workflow: string;
  keys: KeyCopy[];
  /** Global sorted sets holding the run, with its score there. */
  zsets: Array<{ key: string; score: number }>;
  /** Global hashes holding a field named by the run id, with its value. */
  hashes: Array<{ key: string; value: string }>;
}

async function readKey(redis: Redis, key: string): Promise<KeyCopy | undefined> {
  const type = await redis.type(key);
  if (type === 'hash') return { type, key, value: await redis.hgetall(key) };
  if (type === 'set') return { type, key, value: await redis.smembers(key) };
  if (type === 'list') return { type, key, value: await redis.lrange(key, 0, -1) };
  if (type === 'zset') {
    const flat = await redis.zrange(key, '0', '-1', 'WITHSCORES');
    const pairs: Array<[string, number]> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i]!, Number(flat[i + 1])]);
    return { type, key, value: pairs };
  }
  return undefined;
}

/** Reads a template run: every key its `:keys` set names (and the set and the run hash), and where the global keys name it. */
async function readTemplate(redis: Redis, prefix: string, id: string): Promise<RedisTemplate> {
  const runKey = `${prefix}:run:{${id}}`;
  const names = new Set([runKey, `${runKey}:keys`, ...(await redis.smembers(`${runKey}:keys`))]);
  const keys: KeyCopy[] = [];
  for (const name of names) {
    const copy = await readKey(redis, name);
    if (copy) keys.push(copy);
  }
  const run = keys.find((k) => k.key === runKey);
  if (run?.type !== 'hash') throw new Error(`template run ${id} has no hash at ${runKey}`);
  const zsets: RedisTemplate['zsets'] = [];
  const hashes: RedisTemplate['hashes'] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `{${prefix}}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of found) {
      const type = await redis.type(key);
      if (type === 'zset') {
        const score = await redis.zscore(key, id);
        if (score !== null) zsets.push({ key, score: Number(score) });
      } else if (type === 'hash') {
        const value = await redis.hget(key, id);
        if (value !== null) hashes.push({ key, value });
      }
    }
  } while (cursor !== '0');
  return { id, createdAt: Number(run.value['createdAt']), workflow: run.value['workflow']!, keys, zsets, hashes };
}

const isTimeField = (field: string) => field.endsWith('At');

/** Templates read so far, by prefix and run id (they never change once made). */
const readTemplates = new Map<string, RedisTemplate>();

/**
 * Loads runs into a Redis store by copying the template runs with pipelined writes (a batch of
 * runs per round trip): for run `n` the template of the status `STATUS_MIX` gives `n`, every key
 * renamed to a fresh UUIDv7 id of the new creation time, the template id replaced by the new one
 * in every value, every `…At` field and every index score moved by the same amount, and the
 * workflow `scale-w<(n + n div 100) mod 10>` (every status in every workflow) (in the run hash, the index names and the index values). Everything
 * else is the engine's own bytes.
 */
export async function loadRedisRuns(
  redis: Redis,
  prefix: string,
  templates: Templates,
  range: { first: number; count: number; createdFrom: number; spacingMs: number },
  batch = 500,
): Promise<void> {
  const byStatus = new Map<string, RedisTemplate>();
  for (const { status } of STATUS_MIX) {
    // Read once: finding the global keys is a SCAN of the whole keyspace, which grows with the load.
    const key = `${prefix}\u0000${templates[status]}`;
    let template = readTemplates.get(key);
    if (template === undefined) {
      template = await readTemplate(redis, prefix, templates[status]);
      readTemplates.set(key, template);
    }
    byStatus.set(status, template);
  }
  const pick = (n: number): RedisTemplate => byStatus.get(statusOf(n))!;
  // Two pipelines in flight: the next batch is built while the server applies the previous one.
  const inFlight: Array<Promise<void>> = [];
  const send = async (pipeline: ReturnType<Redis['pipeline']>) => {
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error !== null);
    if (failed) throw failed[0];
  };
  for (let start = 0; start < range.count; start += batch) {
    const pipeline = redis.pipeline();
    for (let i = start; i < Math.min(range.count, start + batch); i++) {
      const n = range.first + i;
      const tpl = pick(n);
      const created = range.createdFrom + i * range.spacingMs;
      const delta = created - tpl.createdAt;
      const id = uuidv7(created);
      const workflow = `scale-w${(n + Math.floor(n / 100)) % WORKFLOW_COUNT}`;
      const swap = (text: string) => text.split(tpl.id).join(id);
      const swapWorkflow = (text: string) => text.split(tpl.workflow).join(workflow);
      for (const copy of tpl.keys) {
        const key = swap(copy.key);
        if (copy.type === 'hash') {
          const fields: string[] = [];
          for (const [field, value] of Object.entries(copy.value)) {
            const moved = isTimeField(field) && value !== '' ? String(Number(value) + delta) : field === 'workflow' ? workflow : swap(value);
            fields.push(field, moved);
          }
          pipeline.hset(key, ...fields);
        } else if (copy.type === 'set') pipeline.sadd(key, ...copy.value.map(swap));
        else if (copy.type === 'list') pipeline.rpush(key, ...copy.value.map(swap));
        else pipeline.zadd(key, ...copy.value.flatMap(([member, score]) => [score, swap(member)]));
      }
      for (const { key, score } of tpl.zsets) pipeline.zadd(swapWorkflow(key), score + delta, id);
      for (const { key, value } of tpl.hashes) pipeline.hset(key, id, swapWorkflow(value));
    }
    inFlight.push(send(pipeline));
    if (inFlight.length >= 2) await inFlight.shift();
  }
  await Promise.all(inFlight);
}
