-- Stores the outcome if ARGV token still holds an unexpired lease (compare-and-set on the token).
-- KEYS[1] record · ARGV token, state, responseJson, retentionMs
-- Reply 1 stored · 0 fence lost · 2 already completed by this same token (a retried complete)
local key = KEYS[1]
local token, terminal, response, retention_ms = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
if terminal ~= 'succeeded' and terminal ~= 'failed_final' then
  return redis.error_reply('ERR oncely: complete needs succeeded or failed_final, got ' .. tostring(terminal))
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local state, holder, lease_until = unpack(redis.call('HMGET', key, 'state', 'token', 'lease_until'))
if holder ~= token then return 0 end
if state ~= 'in_progress' then return 2 end
if tonumber(lease_until) <= now then return 0 end

local expires = now + retention_ms
-- The token stays so a retried complete of the same owner can be recognised; the lease is over.
redis.call('HSET', key, 'state', terminal, 'response', response, 'expires_at', string.format('%d', expires))
redis.call('HDEL', key, 'lease_until')
redis.call('PEXPIREAT', key, string.format('%d', expires))
return 1
