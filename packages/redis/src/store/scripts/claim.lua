-- Claim-or-read in one command: claims when the record is absent (an expired key is absent) or
-- in progress with a lapsed lease and the same fingerprint; otherwise returns the record as it stands.
-- KEYS[1] record · ARGV fingerprint, token, leaseMs, retentionMs
-- Reply {'claimed', fence, takeover 0|1} or {'existing', state, fingerprint, fence, leaseRemainingMs|-1, createdAt, expiresAt, response|''}
local key = KEYS[1]
local fingerprint, token = ARGV[1], ARGV[2]
local lease_ms, retention_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
local clock = redis.call('TIME')
-- Lease expiry is judged by this server's clock, never by the application's.
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local state, stored_fingerprint, fence, lease_until, created_at, expires_at, response = unpack(
  redis.call('HMGET', key, 'state', 'fingerprint', 'fence', 'lease_until', 'created_at', 'expires_at', 'response'))

local takeover = state == 'in_progress' and tonumber(lease_until) <= now and stored_fingerprint == fingerprint
if state and not takeover then
  local remaining = -1
  if state == 'in_progress' then remaining = math.max(0, tonumber(lease_until) - now) end
  return {'existing', state, stored_fingerprint, tonumber(fence), remaining, tonumber(created_at), tonumber(expires_at), response or ''}
end

local new_fence, created = 1, now
if takeover then
  new_fence, created = tonumber(fence) + 1, tonumber(created_at)
end
-- Retention never ends before the lease, so a record cannot vanish while its owner still holds it.
local expires = now + math.max(lease_ms, retention_ms)
redis.call('HSET', key, 'state', 'in_progress', 'fingerprint', fingerprint, 'fence', string.format('%d', new_fence),
  'token', token, 'lease_until', string.format('%d', now + lease_ms), 'created_at', string.format('%d', created),
  'expires_at', string.format('%d', expires))
redis.call('PEXPIREAT', key, string.format('%d', expires))
return {'claimed', new_fence, takeover and 1 or 0}
