-- Deletes the in-progress record if ARGV token still holds an unexpired lease, so a retry may execute.
-- KEYS[1] record · ARGV token · Reply 1 released · 0 fence lost
local key = KEYS[1]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local state, holder, lease_until = unpack(redis.call('HMGET', key, 'state', 'token', 'lease_until'))
if state ~= 'in_progress' or holder ~= ARGV[1] or tonumber(lease_until) <= now then return 0 end
redis.call('DEL', key)
return 1
