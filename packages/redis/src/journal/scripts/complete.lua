-- Records a definitive outcome unless one is recorded already (the first outcome wins).
-- KEYS[1] entry · KEYS[2] pending · KEYS[3] unknown · KEYS[4] settled index
-- ARGV operationId, state ('succeeded'/'failed'), hasData ('1'/'0'), dataJson
-- Reply: the entry's fields after the change, or an empty array when it was never begun.
local entry = KEYS[1]
local state = redis.call('HGET', entry, 'state')
if not state then return {} end
if state == 'succeeded' or state == 'failed' then return redis.call('HGETALL', entry) end
if ARGV[2] ~= 'succeeded' and ARGV[2] ~= 'failed' then
  return redis.error_reply('ERR oncely: complete needs succeeded or failed, got ' .. tostring(ARGV[2]))
end
local clock = redis.call('TIME')
local now = string.format('%d', tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000))
redis.call('HSET', entry, 'state', ARGV[2], 'updated_at', now)
if ARGV[3] == '1' then redis.call('HSET', entry, 'data', ARGV[4]) end
redis.call('HDEL', entry, 'last_error')
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], now, ARGV[1])
return redis.call('HGETALL', entry)
