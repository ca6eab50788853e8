-- Creates the journal entry with the proposed key, or returns the existing one untouched.
-- KEYS[1] entry · KEYS[2] pending index · ARGV operationId, key, hasRequest ('1'/'0'), requestJson
-- Reply {'started'|'resumed', field, value, ...}
local entry, pending = KEYS[1], KEYS[2]
if redis.call('EXISTS', entry) == 1 then
  local fields = redis.call('HGETALL', entry)
  table.insert(fields, 1, 'resumed')
  return fields
end
local clock = redis.call('TIME')
local now = string.format('%d', tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000))
redis.call('HSET', entry, 'operation_id', ARGV[1], 'key', ARGV[2], 'attempts', '0', 'state', 'pending',
  'created_at', now, 'updated_at', now)
if ARGV[3] == '1' then redis.call('HSET', entry, 'request', ARGV[4]) end
redis.call('ZADD', pending, now, ARGV[1])
local fields = redis.call('HGETALL', entry)
table.insert(fields, 1, 'started')
return fields
