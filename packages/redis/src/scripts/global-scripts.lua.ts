import { INDEX_LIB } from './lua-lib.lua.js';

/**
 * Scripts over the global keys (`{prefix}:...`, one slot). `KEYS[1]` is `{prefix}:runs` for the
 * index scripts; the global base `{prefix}` is derived from it.
 */
const GLOBAL_PRELUDE = /* lua */ `
local G = string.sub(KEYS[1], 1, -6)
local function opt(s)
  if s == nil or s == '' then return nil end
  return string.sub(s, 2)
end
${INDEX_LIB}
`;

/** ARGV: the facts { id, rev, status, workflow, createdAt, due } of one run. */
export const SYNC_INDEX = `${GLOBAL_PRELUDE}
return applyIndex(G, ARGV)
`;

/**
 * ARGV: id, score. Lowers (or adds) a run's due score before a write that can make it due sooner,
 * so a crash between that write and its index sync cannot strand the run (split mode only).
 */
export const DUE_HINT = `${GLOBAL_PRELUDE}
return redis.call('ZADD', G .. ':due', 'LT', ARGV[2], ARGV[1])
`;

/**
 * ARGV: id. Undoes a due hint for a run that turned out not to exist: removes its due entry unless
 * the run has been indexed meanwhile (a create that finished in between keeps its entry).
 */
export const DROP_HINT = `${GLOBAL_PRELUDE}
if redis.call('HEXISTS', G .. ':ix', ARGV[1]) == 1 then return 0 end
return redis.call('ZREM', G .. ':due', ARGV[1])
`;

/** ARGV: id, workflow (opt), idemField (opt). Removes a run that no longer exists from the indexes. */
export const FORGET_RUN = `${GLOBAL_PRELUDE}
removeIndex(G, ARGV[1], opt(ARGV[2]), opt(ARGV[3]))
return 1
`;

/**
 * Split-mode second half of `runs.create`. ARGV: idemField|'' , staleId|'' , then the run's facts.
 * Claims the idempotency key (first wins; `staleId` may be replaced: it points at a deleted run)
 * and indexes the run. Answers { 'OK' } or { 'EXISTS', id of the winner }.
 */
export const CLAIM_CREATED = `${GLOBAL_PRELUDE}
local field, stale, id = ARGV[1], ARGV[2], ARGV[3]
if field ~= '' then
  local cur = redis.call('HGET', G .. ':idem', field)
  if cur and cur ~= stale and cur ~= id then return { 'EXISTS', cur } end
  redis.call('HSET', G .. ':idem', field, id)
end
applyIndex(G, { ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8] })
return { 'OK' }
`;

/**
 * KEYS: version hash, the workflow's versions zset, the version counter. ARGV: workflow, version,
 * descriptor, now, member. Inserts `active` or updates descriptor + updatedAt; answers the hash.
 */
export const UPSERT_VERSION = /* lua */ `
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'descriptor', ARGV[3], 'updatedAt', ARGV[4])
else
  local seq = redis.call('INCR', KEYS[3])
  redis.call('HSET', KEYS[1], 'workflow', ARGV[1], 'version', ARGV[2], 'status', 'active',
    'descriptor', ARGV[3], 'createdAt', ARGV[4], 'updatedAt', ARGV[4], 'seq', tostring(seq))
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
end
return redis.call('HGETALL', KEYS[1])
`;

/** KEYS: version hash. ARGV: status, now. Answers the hash, or an empty reply when unregistered. */
export const SET_VERSION_STATUS = /* lua */ `
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'updatedAt', ARGV[2])
return redis.call('HGETALL', KEYS[1])
`;

/** KEYS: the workflow's versions zset. ARGV: the version-hash key base (`{prefix}:version:`). */
export const LIST_VERSIONS = /* lua */ `
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local out = {}
for i, m in ipairs(members) do out[i] = redis.call('HGETALL', ARGV[1] .. m) end
return out
`;
