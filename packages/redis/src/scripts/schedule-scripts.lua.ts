// Schedules live in three global keys (one slot): a hash name → record JSON, a sorted set of the
// due times (paused schedules absent), and a sorted set of the names (score 0) for paging by name.

/** KEYS: records hash, due zset, names zset. ARGV: name, record JSON (revision 1), dueAt or ''. Answers {1, json} or {0, existing json}. */
export const CREATE_SCHEDULE = /* lua */ `
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return {0, existing} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], 0, ARGV[1])
if ARGV[3] ~= '' then redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1]) end
return {1, ARGV[2]}
`;

/**
 * KEYS: records hash, due zset. ARGV: name, expected revision, record JSON (revision + 1), dueAt or ''.
 * Compare-and-set on the stored record's revision: answers 1 when written, 0 when it changed or is gone.
 */
export const UPDATE_SCHEDULE = /* lua */ `
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if not existing then return 0 end
if tostring(cjson.decode(existing).revision) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if ARGV[4] == '' then redis.call('ZREM', KEYS[2], ARGV[1]) else redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1]) end
return 1
`;

/** KEYS: records hash, due zset, names zset. ARGV: name. Answers 1 when it existed. */
export const DELETE_SCHEDULE = /* lua */ `
local n = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return n
`;

/** KEYS: records hash, an index zset. ARGV: 'score' min max limit | 'lex' min max limit. Answers the records in index order. */
export const READ_SCHEDULES = /* lua */ `
local names
if ARGV[1] == 'score' then
  names = redis.call('ZRANGEBYSCORE', KEYS[2], ARGV[2], ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))
else
  names = redis.call('ZRANGEBYLEX', KEYS[2], ARGV[2], ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))
end
local out = {}
for _, name in ipairs(names) do
  local record = redis.call('HGET', KEYS[1], name)
  if record then out[#out + 1] = record end
end
return out
`;
