// Slots of one key live in four keys sharing the key's hash tag (one Redis Cluster slot, so every
// script below is single-slot in both index modes; see `KeySpace.slot`):
//   KEYS[1] held    sorted set  holder → expiresAt (expired entries stay until taken over)
//   KEYS[2] line    sorted set  line member, score 0 (lexical order = line order)
//   KEYS[3] lapse   sorted set  line member → the waiter entry's expiresAt
//   KEYS[4] waiters hash        holder → its line member
// A line member is the rank (1000 - priority, 4 digits), queuedAt (offset by 2^53, 17 digits),
// then the holder: its byte order is the contract's line order (priority desc, queuedAt asc,
// holder asc by code point, which is the order of UTF-8 bytes).

const SLOT_PRELUDE = /* lua */ `
local HELD, LINE, LAPSE, WAITERS = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- Waiter entries whose expiresAt <= now are gone from the line (a dead waiter never blocks it).
local function purge(now)
  local lapsed = redis.call('ZRANGEBYSCORE', LAPSE, '-inf', now)
  for _, m in ipairs(lapsed) do
    redis.call('ZREM', LINE, m)
    redis.call('HDEL', WAITERS, string.sub(m, 22))
  end
  if #lapsed > 0 then redis.call('ZREMRANGEBYSCORE', LAPSE, '-inf', now) end
end
local function leave(holder)
  local m = redis.call('HGET', WAITERS, holder)
  if m then
    redis.call('ZREM', LINE, m)
    redis.call('ZREM', LAPSE, m)
    redis.call('HDEL', WAITERS, holder)
  end
end
`;

/**
 * ARGV: holder, limit, expiresAt, now, line member ('' without wait), waiter expiresAt.
 * Answers {1} granted, {0} refused, {0, freeAt} refused with every slot held.
 */
export const ACQUIRE_SLOT = /* lua */ `${SLOT_PRELUDE}
local holder, limit, expiresAt, now = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local member, waitExpiresAt = ARGV[5], ARGV[6]
purge(now)
local held = redis.call('ZSCORE', HELD, holder)
if held then
  if tonumber(expiresAt) > tonumber(held) then redis.call('ZADD', HELD, expiresAt, holder) end
  leave(holder)
  return {1}
end
local free = limit - redis.call('ZCOUNT', HELD, '(' .. now, '+inf')
local granted
if member == '' then
  granted = free > 0
else
  -- Its own earlier entry is not "ahead of it" (a new priority may have moved it).
  leave(holder)
  granted = free > redis.call('ZLEXCOUNT', LINE, '-', '(' .. member)
end
if granted then
  -- free > 0, so while the set is full its lowest score is an expired slot: take it over (its
  -- holder's renew now answers false).
  while redis.call('ZCARD', HELD) >= limit do
    redis.call('ZREM', HELD, redis.call('ZRANGE', HELD, 0, 0)[1])
  end
  redis.call('ZADD', HELD, expiresAt, holder)
  leave(holder)
  return {1}
end
if member ~= '' then
  redis.call('ZADD', LINE, 0, member)
  redis.call('ZADD', LAPSE, waitExpiresAt, member)
  redis.call('HSET', WAITERS, holder, member)
end
if free > 0 then return {0} end
local first = redis.call('ZRANGEBYSCORE', HELD, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
return {0, first[2]}
`;

/** ARGV: holder, expiresAt. Answers 1 when the holder still has its slot (extended, never shortened), else 0. */
export const RENEW_SLOT = /* lua */ `
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not held then return 0 end
if tonumber(ARGV[2]) > tonumber(held) then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
return 1
`;

/** ARGV: holder, now. Frees the slot and the waiter entry; answers the first line member left, or false. */
export const RELEASE_SLOT = /* lua */ `${SLOT_PRELUDE}
local holder, now = ARGV[1], ARGV[2]
redis.call('ZREM', HELD, holder)
leave(holder)
purge(now)
local first = redis.call('ZRANGE', LINE, 0, 0)
return first[1] or false
`;

/** ARGV: now. Read-only: {held [holder, expiresAt, ...] by expiry, line [member, expiresAt, ...] in order}. */
export const INSPECT_SLOT = /* lua */ `
local now = tonumber(ARGV[1])
local held = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES')
local line = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local lapse = redis.call('ZSCORE', KEYS[3], m)
  if lapse and tonumber(lapse) > now then
    line[#line + 1] = m
    line[#line + 1] = lapse
  end
end
return {held, line}
`;
