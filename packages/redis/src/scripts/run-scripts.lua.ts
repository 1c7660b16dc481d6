/**
 * Run scripts: each is ONE atomic script over the run's keys (see `lua-lib.lua.ts` for the helpers
 * and the `finish` that records index facts).
 */

/** ARGV: idemField|'' , staleId|'' , then field/value pairs of the new run hash. */
export const CREATE_RUN = /* lua */ `
local idemField, stale = ARGV[1], ARGV[2]
if idemField ~= '' then
  local taken = idemTaken(idemField, stale)
  if taken then return finish('EXISTS', { taken }) end
end
if redis.call('EXISTS', R) == 1 then return finish('DUPLICATE_ID', {}) end
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', R, unpack(fields))
redis.call('SADD', R .. ':keys', R, R .. ':steps', R .. ':atts', R .. ':state', R .. ':events')
if idemField ~= '' then idemClaim(idemField, redis.call('HGET', R, 'id')) end
return finish('OK', redis.call('HGETALL', R), facts(''))
`;

/**
 * ARGV: owner, now, expiresAt. Answers 'OK' with the run, or 'NO' having written nothing. A
 * wakeAt later than now on a run that is not pending is kept, lowered to a promise (promisedAt)
 * later than now; a due one, or a pending run's start grace, is cleared; a promise whose time
 * came is forgotten with its count (decision 78). Values are written back as the strings they were read as.
 */
export const CLAIM_RUN = /* lua */ `
local owner, now, expiresAt = ARGV[1], ARGV[2], ARGV[3]
local v = redis.call('HMGET', R, 'status', 'leaseOwner', 'leaseExp', 'paused', 'wakeAt', 'promisedAt')
if not v[1] or TERMINAL[v[1]] or v[4] then return finish('NO') end
if v[2] and v[2] ~= owner and tonumber(v[3]) > tonumber(now) then return finish('NO') end
local before = snapshot()
redis.call('HSET', R, 'status', 'running', 'leaseOwner', owner, 'leaseExp', expiresAt, 'updatedAt', now)
redis.call('HINCRBY', R, 'fence', 1)
local keep = nil
if v[1] ~= 'pending' and v[5] and tonumber(v[5]) > tonumber(now) then keep = v[5] end
if v[6] and tonumber(v[6]) > tonumber(now) and (not keep or tonumber(v[6]) < tonumber(keep)) then keep = v[6] end
if keep then redis.call('HSET', R, 'wakeAt', keep) else redis.call('HDEL', R, 'wakeAt') end
if not (v[6] and tonumber(v[6]) > tonumber(now)) then redis.call('HDEL', R, 'promisedAt', 'promises') end
return finish('OK', redis.call('HGETALL', R), facts(before))
`;

/** ARGV: fence, now, expiresAt. */
export const RENEW_LEASE = /* lua */ `
local fence, now, expiresAt = ARGV[1], ARGV[2], ARGV[3]
local v = redis.call('HMGET', R, 'status', 'fence', 'leaseOwner')
if not v[1] or v[2] ~= fence or TERMINAL[v[1]] or not v[3] then return finish('LEASE_LOST', { v[2] or '' }) end
local before = snapshot()
redis.call('HSET', R, 'leaseExp', expiresAt, 'updatedAt', now)
return finish('OK', redis.call('HGETALL', R), facts(before))
`;

/** ARGV: fence, now, to, wakeAt (opt), output (opt), error (opt), from statuses... */
export const TRANSITION_RUN = /* lua */ `
local fence, now, to = ARGV[1], ARGV[2], ARGV[3]
local wakeAt, output, err = opt(ARGV[4]), opt(ARGV[5]), opt(ARGV[6])
local code, data = writable(fence)
if code then return finish(code, data) end
local status = redis.call('HGET', R, 'status')
local allowed = false
for i = 7, #ARGV do if ARGV[i] == status then allowed = true end end
if not allowed then return finish('RUN_CONFLICT', { status }) end
local before = snapshot()
redis.call('HSET', R, 'status', to, 'updatedAt', now)
if to ~= 'running' then redis.call('HDEL', R, 'leaseOwner', 'leaseExp') end
if to == 'waiting' then
  if wakeAt then
    local cur = redis.call('HGET', R, 'wakeAt')
    if not cur or tonumber(wakeAt) < tonumber(cur) then redis.call('HSET', R, 'wakeAt', wakeAt) end
  end
elseif TERMINAL[to] then
  redis.call('HDEL', R, 'wakeAt')
  if output then redis.call('HSET', R, 'output', output) end
  if err then redis.call('HSET', R, 'error', err) end
end
return finish('OK', redis.call('HGETALL', R), facts(before))
`;

/**
 * ARGV: the pause mark (JSON). Marks a non-terminal run paused (\`runs.claim\` refuses it, it leaves
 * the due index); a run paused already is left as it is ('SAME'). Answers the run, or
 * 'RUN_NOT_FOUND' / 'RUN_TERMINAL' { status } having written nothing.
 */
export const PAUSE_RUN = /* lua */ `
local v = redis.call('HMGET', R, 'status', 'paused')
if not v[1] then return finish('RUN_NOT_FOUND') end
if TERMINAL[v[1]] then return finish('RUN_TERMINAL', { v[1] }) end
if v[2] then return finish('SAME', redis.call('HGETALL', R), currentFacts()) end
local before = snapshot()
redis.call('HSET', R, 'paused', ARGV[1])
return finish('OK', redis.call('HGETALL', R), facts(before))
`;

/**
 * ARGV: now, scope ('' for any). Lifts the run's pause (of that scope) and wakes it, back in the due
 * index; a run not paused so is left as it is ('SAME'). Answers as PAUSE_RUN.
 */
export const RESUME_RUN = /* lua */ `
local v = redis.call('HMGET', R, 'status', 'paused')
if not v[1] then return finish('RUN_NOT_FOUND') end
if TERMINAL[v[1]] then return finish('RUN_TERMINAL', { v[1] }) end
if not v[2] or (ARGV[2] ~= '' and cjson.decode(v[2]).scope ~= ARGV[2]) then
  return finish('SAME', redis.call('HGETALL', R), currentFacts())
end
local before = snapshot()
redis.call('HDEL', R, 'paused')
wakeRun(ARGV[1])
return finish('OK', redis.call('HGETALL', R), facts(before))
`;

/** ARGV: now. A no-op on a missing or terminal run. */
export const WAKE_RUN = /* lua */ `
local status = redis.call('HGET', R, 'status')
if not status or TERMINAL[status] then return finish('OK', {}, currentFacts()) end
local before = snapshot()
wakeRun(ARGV[1])
return finish('OK', {}, facts(before))
`;

/** ARGV: at, now. A wake-up at \`at\`, promisedAt = min(promisedAt, at) and one promise more on a non-terminal run (\`runs.promiseWake\`). */
export const PROMISE_WAKE = /* lua */ `
local status = redis.call('HGET', R, 'status')
if not status or TERMINAL[status] then return finish('OK', {}, currentFacts()) end
local before = snapshot()
wakeRun(ARGV[1])
redis.call('HSET', R, 'updatedAt', ARGV[2])
local cur = redis.call('HGET', R, 'promisedAt')
if not cur or tonumber(ARGV[1]) < tonumber(cur) then redis.call('HSET', R, 'promisedAt', ARGV[1]) end
redis.call('HINCRBY', R, 'promises', 1)
return finish('OK', {}, facts(before))
`;

/** ARGV: now. A wake-up now and one promise fewer; at none the promise is forgotten (\`runs.keepPromise\`). */
export const KEEP_PROMISE = /* lua */ `
local status = redis.call('HGET', R, 'status')
if not status or TERMINAL[status] then return finish('OK', {}, currentFacts()) end
local before = snapshot()
wakeRun(ARGV[1])
local left = tonumber(redis.call('HGET', R, 'promises') or '0') - 1
if left > 0 then redis.call('HSET', R, 'promises', tostring(left)) else redis.call('HDEL', R, 'promisedAt', 'promises') end
return finish('OK', {}, facts(before))
`;

/**
 * ARGV: now, hasReason '1'|'0', reason. Sets cancelRequested and wakes a non-terminal run; the
 * reason is stored only by the request that sets the flag (the first reason wins). Answers the run.
 */
export const REQUEST_CANCEL = /* lua */ `
local status = redis.call('HGET', R, 'status')
if not status then return finish('RUN_NOT_FOUND') end
if TERMINAL[status] then return finish('OK', redis.call('HGETALL', R), currentFacts()) end
local before = snapshot()
if ARGV[2] == '1' and redis.call('HGET', R, 'cancel') ~= '1' then redis.call('HSET', R, 'cancelReason', ARGV[3]) end
redis.call('HSET', R, 'cancel', '1')
wakeRun(ARGV[1])
return finish('OK', redis.call('HGETALL', R), facts(before))
`;

/**
 * ARGV: expected fence, now, retries JSON (the whole new list), deadline ('' keep, '-' clear,
 * '=v' set), then the step keys to forget. Reopens a failed or cancelled run at that fence
 * (\`runs.reopen\`): deletes the forgotten steps and their attempt records, and makes the run
 * pending and due now with the fence incremented. Answers 'OK' with the run, 'RUN_NOT_FOUND', or
 * 'RUN_CONFLICT' { status, fence } having written nothing.
 */
export const REOPEN_RUN = /* lua */ `
local fence, now, retries, deadline = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local v = redis.call('HMGET', R, 'status', 'fence')
if not v[1] then return finish('RUN_NOT_FOUND') end
if (v[1] ~= 'failed' and v[1] ~= 'cancelled') or v[2] ~= fence then return finish('RUN_CONFLICT', { v[1], v[2] or '' }) end
local before = snapshot()
for i = 5, #ARGV do
  local key = ARGV[i]
  local S = R .. ':step:' .. key
  local attempts = tonumber(redis.call('HGET', S, 'attempt') or '0')
  for n = 1, attempts do
    local A = R .. ':att:' .. n .. ':' .. key
    redis.call('DEL', A)
    redis.call('LREM', R .. ':atts', 0, A)
    redis.call('SREM', R .. ':keys', A)
  end
  redis.call('DEL', S)
  redis.call('ZREM', R .. ':steps', key)
  redis.call('SREM', R .. ':keys', S)
end
redis.call('HDEL', R, 'leaseOwner', 'leaseExp', 'output', 'error', 'cancelReason')
redis.call('HSET', R, 'status', 'pending', 'cancel', '0', 'wakeAt', now, 'updatedAt', now, 'retries', retries)
redis.call('HINCRBY', R, 'fence', 1)
if deadline == '-' then redis.call('HDEL', R, 'deadline') elseif deadline ~= '' then redis.call('HSET', R, 'deadline', string.sub(deadline, 2)) end
return finish('OK', redis.call('HGETALL', R), facts(before))
`;

/**
 * ARGV: statuses ('' or a comma-separated list), updatedBefore ('' or a time). Deletes every key
 * of the run, found through its key set (no SCAN); with a condition, only a run of one of those
 * statuses last updated before that time. Answers { existed '0'|'1', id, workflow, idemField, tags }
 * (tags: the run's JSON, '' for none, which the caller takes out of the tag index sets).
 */
export const DELETE_RUN = /* lua */ `
if redis.call('EXISTS', R) == 0 then return finish('OK', { '0' }) end
if ARGV[1] and ARGV[1] ~= '' then
  local c = redis.call('HMGET', R, 'status', 'updatedAt')
  if not string.find(',' .. ARGV[1] .. ',', ',' .. c[1] .. ',', 1, true) or tonumber(c[2]) >= tonumber(ARGV[2]) then
    return finish('OK', { '0' })
  end
end
local v = redis.call('HMGET', R, 'id', 'workflow', 'idemField', 'tags')
local members = redis.call('SMEMBERS', R .. ':keys')
for i = 1, #members, 500 do
  redis.call('DEL', unpack(members, i, math.min(i + 499, #members)))
end
redis.call('DEL', R .. ':keys', R)
forgetRun(v[1], v[2], v[3] or '')
return finish('OK', { '1', v[1], v[2], v[3] or '', v[4] or '' })
`;

/**
 * ARGV: fence, seq, the run's tags as the caller read them ('' for none), the merged tags. Tag write
 * \`seq\` (\`runs.setTags\`): 'TAKEN' when the run has taken more writes (nothing written), 'GAP' with
 * the count when fewer, 'CHANGED' when the tags moved since the caller read them (it reads again),
 * else the merged tags and the count written: 'OK'.
 */
export const SET_TAGS = /* lua */ `
local fence, seq, expected, tags = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local code, data = writable(fence)
if code then return finish(code, data) end
local v = redis.call('HMGET', R, 'tagWrites', 'tags')
local taken = tonumber(v[1] or '0')
if seq < taken then return finish('TAKEN', {}) end
if seq > taken then return finish('GAP', { tostring(taken) }) end
if (v[2] or '') ~= expected then return finish('CHANGED', {}) end
redis.call('HSET', R, 'tags', tags, 'tagWrites', tostring(seq + 1))
return finish('OK', {})
`;
