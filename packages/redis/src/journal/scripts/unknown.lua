-- Marks the entry unknown (the caller gave up without an answer), unless it is final.
-- KEYS[1] entry · KEYS[2] pending · KEYS[3] unknown index · ARGV operationId, hasError ('1'/'0'), lastError
-- Reply: the entry's fields after the change, or an empty array when it was never begun.
local entry = KEYS[1]
local state = redis.call('HGET', entry, 'state')
if not state then return {} end
if state == 'succeeded' or state == 'failed' then return redis.call('HGETALL', entry) end
local clock = redis.call('TIME')
local now = string.format('%d', tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000))
redis.call('HSET', entry, 'state', 'unknown', 'updated_at', now)
if ARGV[2] == '1' then redis.call('HSET', entry, 'last_error', ARGV[3]) else redis.call('HDEL', entry, 'last_error') end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], now, ARGV[1])
return redis.call('HGETALL', entry)
