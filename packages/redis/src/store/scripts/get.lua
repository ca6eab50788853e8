-- Reads a record with the lease judged by this server's clock; an expired key reads as absent.
-- KEYS[1] record · Reply nil or {'existing', state, fingerprint, fence, leaseRemainingMs|-1, createdAt, expiresAt, response|''}
local key = KEYS[1]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local state, fingerprint, fence, lease_until, created_at, expires_at, response = unpack(
  redis.call('HMGET', key, 'state', 'fingerprint', 'fence', 'lease_until', 'created_at', 'expires_at', 'response'))
if not state then return false end
local remaining = -1
if state == 'in_progress' then remaining = math.max(0, tonumber(lease_until) - now) end
return {'existing', state, fingerprint, tonumber(fence), remaining, tonumber(created_at), tonumber(expires_at), response or ''}
