-- Counts one attempt and marks the entry pending, unless it is final.
-- KEYS[1] entry · KEYS[2] pending index · KEYS[3] unknown index · ARGV operationId
-- Reply: the entry's fields after the change, or an empty array when it was never begun.
local entry = KEYS[1]
local state = redis.call('HGET', entry, 'state')
if not state then return {} end
if state == 'succeeded' or state == 'failed' then return redis.call('HGETALL', entry) end
local clock = redis.call('TIME')
local now = string.format('%d', tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000))
redis.call('HINCRBY', entry, 'attempts', 1)
redis.call('HSET', entry, 'state', 'pending', 'updated_at', now)
redis.call('HDEL', entry, 'last_error')
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[2], now, ARGV[1])
return redis.call('HGETALL', entry)
