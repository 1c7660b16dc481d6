/**
 * Lua shared by the scripts. Run scripts get `KEYS[1]` = the run's hash; every other key of the run
 * is derived from it, so a run script only ever touches keys of the run's hash tag (one slot).
 *
 * Conventions: numbers travel as the strings Node formatted (Lua never formats a float, which would
 * lose digits); an optional argument is `''` when absent and `'=' .. value` when present; scripts
 * answer `{ code, payload, facts }` where `facts` tells the global indexes what to record.
 */

/** Helpers every run script starts with. */
export const RUN_PRELUDE = /* lua */ `
local R = KEYS[1]
local TERMINAL = { completed = true, failed = true, cancelled = true }

local function opt(s)
  if s == nil or s == '' then return nil end
  return string.sub(s, 2)
end

-- When the run next needs dispatching: its timer while pending/waiting, its lease expiry while
-- running; never while paused (a paused run is out of the due index until it is resumed).
local function dueOf(status, wakeAt, leaseExp, paused)
  if paused then return '' end
  if status == 'pending' or status == 'waiting' then return wakeAt or '' end
  if status == 'running' then return leaseExp or '' end
  return ''
end

local function snapshot()
  local v = redis.call('HMGET', R, 'status', 'wakeAt', 'leaseExp', 'paused')
  if not v[1] then return '' end
  return v[1] .. '|' .. dueOf(v[1], v[2], v[3], v[4])
end

-- What the global indexes must record about the run: { id, rev, status, workflow, createdAt, due,
-- changed }, or {} when it does not exist. \`facts(before)\` bumps the revision first (a write
-- happened); \`currentFacts()\` does not (nothing was written, but a due hint may need undoing).
local function currentFacts(changed)
  local v = redis.call('HMGET', R, 'id', 'status', 'workflow', 'createdAt', 'wakeAt', 'leaseExp', 'rev', 'paused')
  if not v[1] then return {} end
  return { v[1], v[7] or '0', v[2], v[3], v[4], dueOf(v[2], v[5], v[6], v[8]), changed or '0' }
end

local function facts(before)
  redis.call('HINCRBY', R, 'rev', 1)
  local changed = '0'
  if snapshot() ~= before then changed = '1' end
  return currentFacts(changed)
end

-- The checks every write of an executing run makes: exists, fence (unless ''), not terminal.
local function writable(fence)
  local v = redis.call('HMGET', R, 'status', 'fence')
  if not v[1] then return 'RUN_NOT_FOUND', {} end
  if fence ~= '' and fence ~= v[2] then return 'LEASE_LOST', { v[2] } end
  if TERMINAL[v[1]] then return 'RUN_TERMINAL', { v[1] } end
  return nil, nil
end

-- wakeAt = min(wakeAt, now) on a run that exists and is not terminal.
local function wakeRun(now)
  local cur = redis.call('HGET', R, 'wakeAt')
  if not cur or tonumber(now) < tonumber(cur) then redis.call('HSET', R, 'wakeAt', now) end
  redis.call('HSET', R, 'updatedAt', now)
end
`;

/** Index maintenance on the global keys `G .. ':...'` (one slot: the `{prefix}` tag). */
export const INDEX_LIB = /* lua */ `
local STATUSES = { 'pending', 'running', 'waiting', 'completed', 'failed', 'cancelled' }

-- '<rev>|<status>|<workflow>' as recorded in G:ix.
local function parseIx(cur)
  local p = string.find(cur, '|', 1, true)
  local q = string.find(cur, '|', p + 1, true)
  return tonumber(string.sub(cur, 1, p - 1)), string.sub(cur, p + 1, q - 1), string.sub(cur, q + 1)
end

-- Records a run's facts unless a newer revision was recorded already (syncs may arrive out of order).
local function applyIndex(G, f)
  local id, rev, status, wf, created, due = f[1], f[2], f[3], f[4], f[5], f[6]
  local cur = redis.call('HGET', G .. ':ix', id)
  if cur then
    local curRev, oldStatus = parseIx(cur)
    if curRev > tonumber(rev) then return 0 end
    if oldStatus ~= status then
      redis.call('ZREM', G .. ':status:' .. oldStatus, id)
      redis.call('ZREM', G .. ':wfs:' .. oldStatus .. ':' .. wf, id)
    end
  end
  redis.call('ZADD', G .. ':runs', created, id)
  redis.call('ZADD', G .. ':wf:' .. wf, created, id)
  redis.call('ZADD', G .. ':status:' .. status, created, id)
  redis.call('ZADD', G .. ':wfs:' .. status .. ':' .. wf, created, id)
  if due == '' then
    redis.call('ZREM', G .. ':due', id)
  else
    redis.call('ZADD', G .. ':due', due, id)
  end
  redis.call('HSET', G .. ':ix', id, rev .. '|' .. status .. '|' .. wf)
  return 1
end

-- Removes a run from every index (and its idempotency key, when it still points at this run).
local function removeIndex(G, id, wf, idemField)
  local cur = redis.call('HGET', G .. ':ix', id)
  if cur then
    local _, _, w = parseIx(cur)
    wf = w
  end
  redis.call('ZREM', G .. ':runs', id)
  redis.call('ZREM', G .. ':due', id)
  for _, s in ipairs(STATUSES) do redis.call('ZREM', G .. ':status:' .. s, id) end
  if wf and wf ~= '' then
    redis.call('ZREM', G .. ':wf:' .. wf, id)
    for _, s in ipairs(STATUSES) do redis.call('ZREM', G .. ':wfs:' .. s .. ':' .. wf, id) end
  end
  redis.call('HDEL', G .. ':ix', id)
  if idemField and idemField ~= '' and redis.call('HGET', G .. ':idem', idemField) == id then
    redis.call('HDEL', G .. ':idem', idemField)
  end
end
`;

/**
 * Split mode (Redis Cluster): a run script touches its run's slot only and hands its facts back to
 * Node, which records them with a second script in the global slot.
 */
export const SPLIT_TAIL = /* lua */ `
-- Without facts of its own (nothing indexed changed, or the write was refused), a script still
-- reports the run's current facts, so Node can undo a due hint sent alongside it.
local function finish(code, payload, f)
  if not f or #f == 0 then f = currentFacts() end
  return { code, payload or {}, f }
end
local function idemTaken(field, staleId) return nil end
local function idemClaim(field, id) end
local function forgetRun(id, wf, idemField) end
`;

/**
 * Single-server mode: the run script also maintains the global indexes itself, in the same atomic
 * script. `KEYS[2]` is `{prefix}:runs`; the global base is derived from it.
 */
export const COMBINED_TAIL = /* lua */ `
local G = string.sub(KEYS[2], 1, -6)
${INDEX_LIB}
local function finish(code, payload, f)
  -- The indexes are exact in this mode: only a change of status or due time needs writing.
  if f and f[7] == '1' then applyIndex(G, f) end
  return { code, payload or {}, {} }
end
local function idemTaken(field, staleId)
  local cur = redis.call('HGET', G .. ':idem', field)
  if cur and cur ~= staleId then return cur end
  return nil
end
local function idemClaim(field, id) redis.call('HSET', G .. ':idem', field, id) end
local function forgetRun(id, wf, idemField) removeIndex(G, id, wf, idemField) end
`;
