-- Deletes a settled entry if it is still settled and idle since the cutoff (purge, second step).
-- KEYS[1] entry · KEYS[2] settled index · ARGV operationId, cutoffMs
-- Reply 1 deleted · 0 left alone
local state, updated = unpack(redis.call('HMGET', KEYS[1], 'state', 'updated_at'))
redis.call('ZREM', KEYS[2], ARGV[1])
if state ~= 'succeeded' and state ~= 'failed' then return 0 end
if tonumber(updated) > tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[2], updated, ARGV[1])
  return 0
end
redis.call('DEL', KEYS[1])
return 1
