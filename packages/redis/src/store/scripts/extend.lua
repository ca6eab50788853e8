-- Renews the lease for ARGV leaseMs from now if ARGV token still holds an unexpired lease.
-- KEYS[1] record · ARGV token, leaseMs · Reply 1 renewed · 0 fence lost
local key = KEYS[1]
local lease_ms = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local state, holder, lease_until, expires_at = unpack(redis.call('HMGET', key, 'state', 'token', 'lease_until', 'expires_at'))
if state ~= 'in_progress' or holder ~= ARGV[1] or tonumber(lease_until) <= now then return 0 end
local renewed = now + lease_ms
-- Retention grows with the lease so the record outlives the work it guards.
local expires = math.max(tonumber(expires_at), renewed)
redis.call('HSET', key, 'lease_until', string.format('%d', renewed), 'expires_at', string.format('%d', expires))
redis.call('PEXPIREAT', key, string.format('%d', expires))
return 1
