// Bulk operations live in two global keys (one slot): a hash id → record JSON, and a sorted set
// of the ids (score 0) for paging by id, newest (greatest) first.

/** KEYS: records hash, ids zset. ARGV: id, record JSON (revision 1). Answers {1, json} or {0, existing json}. */
export const CREATE_BULK = /* lua */ `
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return {0, existing} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return {1, ARGV[2]}
`;

/**
 * KEYS: records hash. ARGV: id, expected revision, record JSON (revision + 1).
 * Compare-and-set on the stored record's revision: answers 1 when written, 0 when it changed or is gone.
 */
export const UPDATE_BULK = /* lua */ `
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if not existing then return 0 end
if tostring(cjson.decode(existing).revision) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`;

/** KEYS: records hash, ids zset. ARGV: id. Answers 1 when it existed. */
export const DELETE_BULK = /* lua */ `
local n = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return n
`;

/** KEYS: records hash, ids zset. ARGV: max (lex bound), limit. Answers the records, greatest id first. */
export const READ_BULK = /* lua */ `
local ids = redis.call('ZREVRANGEBYLEX', KEYS[2], ARGV[1], '-', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  local record = redis.call('HGET', KEYS[1], id)
  if record then out[#out + 1] = record end
end
return out
`;
