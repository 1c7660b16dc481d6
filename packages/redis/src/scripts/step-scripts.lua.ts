/**
 * Step, state and event scripts. Step `<key>` lives in hash `R:step:<key>`, ordered by `R:steps`
 * (score = seq); attempt `<n>` of it in hash `R:att:<n>:<key>`, listed in `R:atts`. A step and its
 * attempt records are always written by the same script, so no reader sees one without the other.
 */

/**
 * ARGV: fence|'' , key, seq, nStepArgs, step field/value pairs (nStepArgs items), then attempt
 * field/value pairs (present when the step starts `running`: attempt 1 opens in the same write; or
 * when it is recorded finished: its finished attempt 1).
 */
export const INSERT_STEP = /* lua */ `
local code, data = writable(ARGV[1])
if code then return finish(code, data) end
local key, seq, n = ARGV[2], ARGV[3], tonumber(ARGV[4])
local S = R .. ':step:' .. key
if redis.call('EXISTS', S) == 1 then return finish('OK', { '0', redis.call('HGETALL', S) }) end
local fields = {}
for i = 5, 4 + n do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', S, unpack(fields))
redis.call('ZADD', R .. ':steps', seq, key)
redis.call('SADD', R .. ':keys', S)
if #ARGV > 4 + n then
  local A = R .. ':att:1:' .. key
  local att = {}
  for i = 5 + n, #ARGV do att[#att + 1] = ARGV[i] end
  redis.call('DEL', A)
  redis.call('HSET', A, unpack(att))
  redis.call('RPUSH', R .. ':atts', A)
  redis.call('SADD', R .. ':keys', A)
end
return finish('OK', { '1', redis.call('HGETALL', S) })
`;

/**
 * ARGV: fence|'' , now, key, fromAttempt, toStatus, toAttempt (opt), output (opt), error (opt),
 * wakeAt ('' keep, '-' clear, '=v' set), childRunId (opt), endStatus (opt), endOutput (opt),
 * endError (opt), startWorker (opt), turn (opt: the delivery turn; absent leaves the field), then
 * the allowed from statuses.
 */
export const TRANSITION_STEP = /* lua */ `
local code, data = writable(ARGV[1])
if code then return finish(code, data) end
local now, key, fromAttempt, toStatus = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local S = R .. ':step:' .. key
local cur = redis.call('HMGET', S, 'status', 'attempt')
if not cur[1] then return finish('STEP_CONFLICT', {}) end
local allowed = false
for i = 16, #ARGV do if ARGV[i] == cur[1] then allowed = true end end
if not allowed or tonumber(cur[2]) ~= tonumber(fromAttempt) then
  return finish('STEP_CONFLICT', { cur[1], cur[2] })
end
local nextAttempt = opt(ARGV[6]) or cur[2]
local endStatus = opt(ARGV[11])
if endStatus then
  local A = R .. ':att:' .. cur[2] .. ':' .. key
  if redis.call('EXISTS', A) == 1 then
    redis.call('HSET', A, 'status', endStatus, 'endedAt', now)
    local endOutput, endError = opt(ARGV[12]), opt(ARGV[13])
    if endOutput then redis.call('HSET', A, 'output', endOutput) end
    if endError then redis.call('HSET', A, 'error', endError) end
  end
end
local worker = opt(ARGV[14])
if worker then
  local A = R .. ':att:' .. nextAttempt .. ':' .. key
  if redis.call('EXISTS', A) == 0 then
    redis.call('RPUSH', R .. ':atts', A)
    redis.call('SADD', R .. ':keys', A)
  end
  redis.call('DEL', A)
  redis.call('HSET', A, 'stepKey', key, 'attempt', nextAttempt, 'status', 'running', 'worker', worker, 'startedAt', now)
end
redis.call('HSET', S, 'status', toStatus, 'attempt', nextAttempt, 'updatedAt', now)
local output, err, child = opt(ARGV[7]), opt(ARGV[8]), opt(ARGV[10])
if output then redis.call('HSET', S, 'output', output) end
if err then redis.call('HSET', S, 'error', err) end
if ARGV[9] == '-' then
  redis.call('HDEL', S, 'wakeAt')
elseif ARGV[9] ~= '' then
  redis.call('HSET', S, 'wakeAt', string.sub(ARGV[9], 2))
end
if child then redis.call('HSET', S, 'childRunId', child) end
local turn = opt(ARGV[15])
if turn then redis.call('HSET', S, 'turn', turn) end
return finish('OK', redis.call('HGETALL', S))
`;

/** ARGV: fence|'' , now, key, value (JSON). One hash field per state key: no read-modify-write. */
export const SET_STATE = /* lua */ `
local code, data = writable(ARGV[1])
if code then return finish(code, data) end
redis.call('HSET', R .. ':state', ARGV[3], ARGV[4])
redis.call('HSET', R, 'updatedAt', ARGV[2])
return finish('OK')
`;

/**
 * ARGV: now, name, stored message, '1' when the send has an idempotency key (else ''), the key.
 * Messages live in hash `R:msgs`: `c:<name>` counts the messages of a name, `m:<seq>:<name>` holds
 * one, `k:<key>` the seq an idempotency key stored. A run whose events a release before messages
 * stored (`R:events`, field = name, first write won) counts that event as message 1. Answers
 * { '1', seq } when stored (and wakes the run), { '0', seq } for a known key, { '0', '' } for a
 * terminal run.
 */
export const DELIVER_EVENT = /* lua */ `
local status = redis.call('HGET', R, 'status')
if not status then return finish('RUN_NOT_FOUND') end
local M = R .. ':msgs'
local name, keyed, key = ARGV[2], ARGV[4] == '1', ARGV[5]
if keyed then
  local earlier = redis.call('HGET', M, 'k:' .. key)
  if earlier then return finish('OK', { '0', earlier }, currentFacts()) end
end
if TERMINAL[status] then return finish('OK', { '0', '' }, currentFacts()) end
local before = snapshot()
local count = redis.call('HGET', M, 'c:' .. name)
if not count then count = redis.call('HEXISTS', R .. ':events', name) end
local seq = tostring(tonumber(count) + 1)
redis.call('HSET', M, 'c:' .. name, seq, 'm:' .. seq .. ':' .. name, ARGV[3])
if keyed then redis.call('HSET', M, 'k:' .. key, seq) end
redis.call('SADD', R .. ':keys', M)
wakeRun(ARGV[1])
return finish('OK', { '1', seq }, facts(before))
`;

/** Every step of the run in seq order, in one read: { key, fields }... */
export const LOAD_STEPS = /* lua */ `
local keys = redis.call('ZRANGE', R .. ':steps', 0, -1)
local out = {}
for i, key in ipairs(keys) do out[i] = redis.call('HGETALL', R .. ':step:' .. key) end
return finish('OK', out)
`;

/** Every attempt record of the run plus the step seqs: { attempts, steps-with-scores }. */
export const LOAD_HISTORY = /* lua */ `
local names = redis.call('LRANGE', R .. ':atts', 0, -1)
local out = {}
for i, name in ipairs(names) do out[i] = redis.call('HGETALL', name) end
return finish('OK', { out, redis.call('ZRANGE', R .. ':steps', 0, -1, 'WITHSCORES') })
`;
