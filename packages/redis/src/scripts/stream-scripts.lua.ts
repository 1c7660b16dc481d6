/**
 * ARGV: fence ('' for none), now, stream name, index, kind ('d' a chunk, 'c' the end marker), the
 * chunk's JSON ('' for the marker). A stream is the list `R:st:<name>|` (the `|` keeps a name ending in `}` out of the doctor's
 * scan for run hashes, `<prefix>:run:{*}`), one element per entry,
 * `<kind>:<writtenAt>:<json>`, the end marker (`c:…`) last; the set `R:streams` names the run's
 * streams, and both are registered in `R:keys`, so `DELETE_RUN` takes them with the run. Answers
 * { '1' } when stored, { '0' } when the place already holds an entry (a replay), or
 * STREAM_CONFLICT with { length, closed } (a gap, or a chunk after the marker).
 */
export const APPEND_STREAM = /* lua */ `
local code, data = writable(ARGV[1])
if code then return finish(code, data) end
local L = R .. ':st:' .. ARGV[3] .. '|'
local n = redis.call('LLEN', L)
local closed = false
if n > 0 then closed = string.sub(redis.call('LINDEX', L, -1), 1, 1) == 'c' end
local length = n
if closed then length = n - 1 end
local index = tonumber(ARGV[4])
local flag = '0'
if closed then flag = '1' end
if ARGV[5] == 'c' then
  if closed then return finish('OK', { '0' }) end
  if index ~= length then return finish('STREAM_CONFLICT', { tostring(length), flag }) end
else
  if index < length then return finish('OK', { '0' }) end
  if index ~= length or closed then return finish('STREAM_CONFLICT', { tostring(length), flag }) end
end
if n == 0 then
  redis.call('SADD', R .. ':streams', ARGV[3])
  redis.call('SADD', R .. ':keys', L, R .. ':streams')
end
redis.call('RPUSH', L, ARGV[5] .. ':' .. ARGV[2] .. ':' .. ARGV[6])
return finish('OK', { '1' })
`;
